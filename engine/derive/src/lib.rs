//! The engine's derives for its analysis state, each implemented field by field so that a field
//! added to the state is taken care of with no other edit: `#[derive(Renumber)]` and
//! `#[derive(Combine)]`.
//!
//! # `#[derive(Renumber)]`
//!
//! The engine's `analyze::renumber::Renumber` trait: a type of the analysis state moves every
//! frame and flow number it holds when analyses are combined. For a struct (named or tuple
//! fields) the derive generates
//!
//! ```text
//! impl Renumber for Name {
//!     fn renumber(&mut self, r: &Renumbering) {
//!         let Name { a, b, .. } = self;
//!         Renumber::renumber(a, r);
//!         Renumber::renumber(b, r);
//!     }
//! }
//! ```
//!
//! and for an enum a `match` that does the same for the fields of each variant. Every field's
//! type must implement `Renumber` (a type that holds no number implements it as a no-op), so a
//! field whose type holds numbers cannot be forgotten. A field marked `#[renumber(skip)]` is
//! left alone: only for a field that holds numbers which must not move (say why beside it).
//!
//! # `#[derive(Combine)]`
//!
//! The engine's `analyze::combining::Combine` trait, for a struct: how two analyses' values
//! combine, added (a shard's) or grafted (a later part's, at a seam). Every field says how it
//! combines by an attribute naming a strategy, a module of `analyze::combining::by`:
//!
//! - `#[combine(sum)]`: counts, added; grafted, what `end` counted beyond `start`;
//! - `#[combine(earliest)]`: first frames and times, the earlier; grafted, this one's, or
//!   `end`'s where this one has none;
//! - `#[combine(latest)]`: last times, the later;
//! - `#[combine(max)]`: extremes, the larger; grafted, refused where the part's greatest
//!   value after the seam cannot be told;
//! - `#[combine(end)]`: running state, grafted, `end`'s; refused when added;
//! - `#[combine(same)]`: settings, equal in both or refused;
//! - `#[combine(decided)]`: a decision of the capture's start, the same in shards; grafted,
//!   this one's;
//! - `#[combine(continued)]`: lists in frame order, `other`'s appended; grafted, `end`'s
//!   beyond `start`'s appended;
//! - `#[combine(own)]`: this analysis's own, which the other's does not change (say why);
//! - `#[combine(add = STRATEGY, graft = STRATEGY)]`: one strategy for each;
//! - `#[combine(with = path)]`: `path::add` and `path::graft`, functions of the same
//!   signatures as a strategy's, for a field whose combination needs logic of its own;
//! - no attribute: the field's type's own `Combine` (only types that are combinable whole
//!   implement it: a plain `u64` or `Option` must say which strategy it takes).
//!
//! For `struct Name { a: A, b: B }` with `a` a `sum` and `b` nested, it generates
//!
//! ```text
//! impl Combine for Name {
//!     fn add(&mut self, other: &Self) -> Result<(), Refused> {
//!         let Name { a, b } = self;
//!         by::sum::add(a, &other.a)?;
//!         by::nested::add(b, &other.b)?;
//!         Ok(())
//!     }
//!
//!     fn graft(&mut self, start: &Self, end: Self, seam: &Seam) -> Result<(), Refused> {
//!         let Name { a: end_a, b: end_b } = end;
//!         let Name { a, b } = self;
//!         by::sum::graft(a, &start.a, end_a, seam)?;
//!         by::nested::graft(b, &start.b, end_b, seam)?;
//!         Ok(())
//!     }
//! }
//! ```
//!
//! combining the fields in their order and stopping at the first refusal. A struct attribute
//! `#[combine(check = path)]` calls `path(self, start, &end, seam)?` before a graft combines any
//! field: for an agreement at the seam that spans fields.
//!
//! The generated code names the traits as `crate::analyze::renumber` and
//! `crate::analyze::combining`: the derives are for the engine's own types.

use proc_macro::TokenStream;
use proc_macro2::TokenStream as Tokens;
use quote::{format_ident, quote};
use syn::{Data, DeriveInput, Fields, parse_macro_input};

mod combine;

/// Implements `Renumber` by renumbering every field not marked `#[renumber(skip)]`.
#[proc_macro_derive(Renumber, attributes(renumber))]
pub fn derive_renumber(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    match renumber_impl(&input) {
        Ok(tokens) => tokens.into(),
        Err(error) => error.to_compile_error().into(),
    }
}

fn renumber_impl(input: &DeriveInput) -> syn::Result<Tokens> {
    let name = &input.ident;
    let body = match &input.data {
        Data::Struct(data) => {
            let (pattern, calls) = destructured(&data.fields)?;
            quote! { let #name #pattern = self; #calls }
        }
        Data::Enum(data) => {
            let mut arms = Vec::with_capacity(data.variants.len());
            for variant in &data.variants {
                let (pattern, calls) = destructured(&variant.fields)?;
                let variant = &variant.ident;
                arms.push(quote! { #name::#variant #pattern => { #calls } });
            }
            match arms.is_empty() {
                true => quote! { match *self {} },
                false => quote! { match self { #(#arms)* } },
            }
        }
        Data::Union(data) => {
            return Err(syn::Error::new_spanned(data.union_token, "Renumber cannot be derived for a union"));
        }
    };
    let mut generics = input.generics.clone();
    for parameter in generics.type_params_mut() {
        parameter.bounds.push(syn::parse_quote!(crate::analyze::renumber::Renumber));
    }
    let (impl_generics, type_generics, where_clause) = generics.split_for_impl();
    Ok(quote! {
        impl #impl_generics crate::analyze::renumber::Renumber for #name #type_generics #where_clause {
            #[allow(unused_variables)]
            fn renumber(&mut self, r: &crate::analyze::renumber::Renumbering) {
                #body
            }
        }
    })
}

/// The pattern that binds `fields` (`{ a, b, .. }`, `(f0, _, f2)`, or nothing), and a call
/// renumbering each bound field.
fn destructured(fields: &Fields) -> syn::Result<(Tokens, Tokens)> {
    let mut bindings = Vec::new();
    let mut calls = Vec::new();
    for (index, field) in fields.iter().enumerate() {
        let skipped = skipped(field)?;
        let binding = field.ident.clone().unwrap_or_else(|| format_ident!("field_{index}"));
        if !skipped {
            calls.push(quote! { crate::analyze::renumber::Renumber::renumber(#binding, r); });
        }
        bindings.push(match (&field.ident, skipped) {
            (Some(_), true) => None,
            (Some(ident), false) => Some(quote! { #ident }),
            (None, true) => Some(quote! { _ }),
            (None, false) => Some(quote! { #binding }),
        });
    }
    let bound = bindings.iter().flatten();
    let pattern = match fields {
        Fields::Named(_) => quote! { { #(#bound,)* .. } },
        Fields::Unnamed(_) => quote! { ( #(#bound),* ) },
        Fields::Unit => quote! {},
    };
    Ok((pattern, quote! { #(#calls)* }))
}

/// Is the field marked `#[renumber(skip)]`? Any other `renumber` attribute is an error.
fn skipped(field: &syn::Field) -> syn::Result<bool> {
    let mut skip = false;
    for attribute in field.attrs.iter().filter(|a| a.path().is_ident("renumber")) {
        attribute.parse_nested_meta(|meta| {
            if meta.path.is_ident("skip") {
                skip = true;
                Ok(())
            } else {
                Err(meta.error("the only renumber attribute is #[renumber(skip)]"))
            }
        })?;
    }
    Ok(skip)
}

/// Implements `Combine` by combining every field as its `#[combine(…)]` attribute says (its
/// type's own `Combine` where it has none).
#[proc_macro_derive(Combine, attributes(combine))]
pub fn derive_combine(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    match combine::combine_impl(&input) {
        Ok(tokens) => tokens.into(),
        Err(error) => error.to_compile_error().into(),
    }
}
