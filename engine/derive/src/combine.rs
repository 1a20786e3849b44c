//! `#[derive(Combine)]` (documented in the crate's summary).

use proc_macro2::TokenStream as Tokens;
use quote::{format_ident, quote};
use syn::{Data, DeriveInput, Fields, Path};

/// The strategies a field may name, each a module of `crate::analyze::combining::by`.
const STRATEGIES: &[&str] = &["sum", "earliest", "latest", "max", "end", "same", "decided", "continued", "own"];

/// How a field combines: the modules whose `add` and `graft` combine it.
struct Strategy {
    add: Tokens,
    graft: Tokens,
}

pub fn combine_impl(input: &DeriveInput) -> syn::Result<Tokens> {
    let name = &input.ident;
    let Data::Struct(data) = &input.data else {
        return Err(syn::Error::new_spanned(name, "Combine is derived for structs only"));
    };
    let check = match check(&input.attrs)? {
        Some(path) => quote! { #path(self, start, &end, seam)?; },
        None => quote! {},
    };
    let mut mine = Vec::new();
    let mut theirs = Vec::new();
    let mut adds = Vec::new();
    let mut grafts = Vec::new();
    for (index, field) in data.fields.iter().enumerate() {
        let Strategy { add, graft } = strategy(field)?;
        let (member, binding) = match &field.ident {
            Some(ident) => (quote! { #ident }, ident.clone()),
            None => {
                let member = syn::Index::from(index);
                (quote! { #member }, format_ident!("field_{index}"))
            }
        };
        let end_binding = format_ident!("end_{binding}");
        adds.push(quote! { #add::add(#binding, &other.#member)?; });
        grafts.push(quote! { #graft::graft(#binding, &start.#member, #end_binding, seam)?; });
        mine.push(match &field.ident {
            Some(_) => quote! { #binding },
            None => quote! { #member: #binding },
        });
        theirs.push(quote! { #member: #end_binding });
    }
    let pattern = |bound: &[Tokens]| match &data.fields {
        Fields::Unit => quote! {},
        _ => quote! { { #(#bound),* } },
    };
    let (mine, theirs) = (pattern(&mine), pattern(&theirs));
    let (impl_generics, type_generics, where_clause) = input.generics.split_for_impl();
    let combining = quote! { crate::analyze::combining };
    Ok(quote! {
        impl #impl_generics #combining::Combine for #name #type_generics #where_clause {
            #[allow(unused_variables)]
            fn add(&mut self, other: &Self) -> ::core::result::Result<(), #combining::Refused> {
                let #name #mine = self;
                #(#adds)*
                Ok(())
            }

            #[allow(unused_variables)]
            fn graft(&mut self, start: &Self, end: Self, seam: &#combining::Seam) -> ::core::result::Result<(), #combining::Refused> {
                #check
                let #name #theirs = end;
                let #name #mine = self;
                #(#grafts)*
                Ok(())
            }
        }
    })
}

/// The module of a strategy named by `ident`.
fn strategy_module(ident: &syn::Ident) -> syn::Result<Tokens> {
    match STRATEGIES.iter().any(|s| ident == s) {
        true => Ok(quote! { crate::analyze::combining::by::#ident }),
        false => Err(syn::Error::new_spanned(
            ident,
            format!("a combine strategy is one of {}, or with = path", STRATEGIES.join(", ")),
        )),
    }
}

/// The field's strategy: its attribute's, or its type's own `Combine` where it has none.
fn strategy(field: &syn::Field) -> syn::Result<Strategy> {
    let nested = quote! { crate::analyze::combining::by::nested };
    let (mut add, mut graft) = (None, None);
    for attribute in field.attrs.iter().filter(|a| a.path().is_ident("combine")) {
        attribute.parse_nested_meta(|meta| {
            if meta.path.is_ident("with") {
                let path: Path = meta.value()?.parse()?;
                (add, graft) = (Some(quote! { #path }), Some(quote! { #path }));
            } else if meta.path.is_ident("add") {
                add = Some(strategy_module(&meta.value()?.parse()?)?);
            } else if meta.path.is_ident("graft") {
                graft = Some(strategy_module(&meta.value()?.parse()?)?);
            } else {
                let ident = meta.path.get_ident().ok_or_else(|| meta.error("a combine strategy"))?;
                let module = strategy_module(ident)?;
                (add, graft) = (Some(module.clone()), Some(module));
            }
            Ok(())
        })?;
    }
    match (add, graft) {
        (None, None) => Ok(Strategy { add: nested.clone(), graft: nested }),
        (Some(add), Some(graft)) => Ok(Strategy { add, graft }),
        _ => Err(syn::Error::new_spanned(field, "name both: #[combine(add = STRATEGY, graft = STRATEGY)]")),
    }
}

/// The struct's `#[combine(check = path)]`, if it has one.
fn check(attrs: &[syn::Attribute]) -> syn::Result<Option<Path>> {
    let mut check = None;
    for attribute in attrs.iter().filter(|a| a.path().is_ident("combine")) {
        attribute.parse_nested_meta(|meta| {
            if meta.path.is_ident("check") {
                check = Some(meta.value()?.parse()?);
                Ok(())
            } else {
                Err(meta.error("the only combine attribute of a struct is #[combine(check = path)]"))
            }
        })?;
    }
    Ok(check)
}
