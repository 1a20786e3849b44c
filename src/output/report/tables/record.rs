//! A report record flattened into named cells: the one schema of the report's tables.
//!
//! A table's rows are serde records, the same that the JSON report holds. Flattened, a nested
//! object's keys join its own with `_` (`requests.gaps` → `requests_gaps`); a `null` is an
//! empty cell. Which paths are columns, and of which type, comes from the table's exemplar
//! ([`crate::analyze::exemplar::Exemplar`]): a row in which every optional
//! value is present and every list and tally empty. A list or tally (`udp_sports`,
//! `opcodes`) is one text column (`4791;4792`, `0x0a=3;0x11=2`), for its keys vary from row
//! to row while a table's columns may not.

use std::collections::HashMap;
use std::fmt::Display;

use serde::Serialize;
use serde::ser::{self, Impossible};

/// One value of a flattened record.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    Null,
    Bool(bool),
    U32(u32),
    U64(u64),
    I64(i64),
    F64(f64),
    Text(String),
}

/// The columns of a table: each leaf path of its exemplar, in the exemplar's order, with the
/// cell its exemplar holds there (which gives the column's type).
pub struct Schema {
    pub columns: Vec<(String, Cell)>,
    index: HashMap<String, usize>,
}

impl Schema {
    /// The schema of the records `exemplar` stands for.
    pub fn of(exemplar: &impl Serialize) -> Result<Schema, FlattenError> {
        let columns = discover(exemplar)?;
        let index = columns.iter().enumerate().map(|(i, (path, _))| (path.clone(), i)).collect();
        Ok(Schema { columns, index })
    }

    /// `record`'s cells in the schema's order; a path the record lacks is [`Cell::Null`].
    pub fn row(&self, record: &impl Serialize) -> Result<Vec<Cell>, FlattenError> {
        let cells = vec![Cell::Null; self.columns.len()];
        let mut at = At::new(Leaves::Fill { schema: self, cells, next: 0 });
        record.serialize(Flattener { at: &mut at })?;
        match at.leaves {
            Leaves::Fill { cells, .. } => Ok(cells),
            Leaves::Discover(_) => Err(FlattenError("a row was read as an exemplar".to_string())),
        }
    }

    fn is_text(&self, path: &str) -> bool {
        self.index.get(path).is_some_and(|&i| matches!(self.columns[i].1, Cell::Text(_)))
    }
}

/// What went wrong flattening a record: a value no table column can hold, or a path its
/// schema does not have (the exemplar is not of the record's type).
#[derive(Debug)]
pub struct FlattenError(pub String);

impl Display for FlattenError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for FlattenError {}

impl ser::Error for FlattenError {
    fn custom<T: Display>(msg: T) -> Self {
        FlattenError(msg.to_string())
    }
}

/// The leaves of `exemplar`, in order.
fn discover(exemplar: &(impl Serialize + ?Sized)) -> Result<Vec<(String, Cell)>, FlattenError> {
    let mut at = At::new(Leaves::Discover(Vec::new()));
    exemplar.serialize(Flattener { at: &mut at })?;
    match at.leaves {
        Leaves::Discover(columns) => Ok(columns),
        Leaves::Fill { .. } => Err(FlattenError("an exemplar was read as a row".to_string())),
    }
}

/// Where the leaves go: the exemplar's discovered in order, or a row's into the schema's
/// places (`next`: where the leaf after the last one put is, as the record's order is the
/// exemplar's but where it lacks a key).
enum Leaves<'s> {
    Discover(Vec<(String, Cell)>),
    Fill { schema: &'s Schema, cells: Vec<Cell>, next: usize },
}

/// The serializer's place: the leaves so far, and the path of the value at hand (one buffer,
/// each object's key pushed on it and taken off again).
struct At<'s> {
    leaves: Leaves<'s>,
    path: String,
}

impl<'s> At<'s> {
    fn new(leaves: Leaves<'s>) -> At<'s> {
        At { leaves, path: String::new() }
    }

    /// Serializes `value` under `key` of the path at hand.
    fn under<T: ?Sized + Serialize>(&mut self, key: &str, value: &T) -> Result<(), FlattenError> {
        let base = self.path.len();
        if base > 0 {
            self.path.push('_');
        }
        self.path.push_str(key);
        let serialized = value.serialize(Flattener { at: self });
        self.path.truncate(base);
        serialized
    }
}

impl Leaves<'_> {
    fn put(&mut self, path: &str, cell: Cell) -> Result<(), FlattenError> {
        match self {
            Leaves::Discover(columns) => columns.push((path.to_string(), cell)),
            Leaves::Fill { schema, cells, next } => {
                let in_order = schema.columns.get(*next).is_some_and(|(p, _)| p == path);
                let i = match in_order {
                    true => *next,
                    false => *schema
                        .index
                        .get(path)
                        .ok_or_else(|| FlattenError(format!("`{path}` is not a column of the table")))?,
                };
                if let Some(c) = cells.get_mut(i) {
                    *c = cell;
                }
                *next = i + 1;
            }
        }
        Ok(())
    }

    /// Is `path` one text column, its entries joined (a list or a tally)?
    fn joins(&self, path: &str) -> bool {
        match self {
            // the exemplar's lists and tallies are empty: a nested object has keys
            Leaves::Discover(_) => false,
            Leaves::Fill { schema, .. } => schema.is_text(path),
        }
    }
}

/// Serializes one value at its place's path.
struct Flattener<'a, 's> {
    at: &'a mut At<'s>,
}

/// A nested object or a map: each entry a leaf or a further object under its key; or, where
/// the schema makes the path one text column, its entries joined.
struct Object<'a, 's> {
    at: &'a mut At<'s>,
    joined: Option<Vec<String>>,
    key: Option<String>,
    entries: usize,
}

impl Object<'_, '_> {
    fn entry<T: ?Sized + Serialize>(&mut self, key: &str, value: &T) -> Result<(), FlattenError> {
        self.entries += 1;
        match &mut self.joined {
            Some(joined) => joined.push(format!("{key}={}", text_of(value)?)),
            None => self.at.under(key, value)?,
        }
        Ok(())
    }

    fn end(self) -> Result<(), FlattenError> {
        let At { leaves, path } = self.at;
        match self.joined {
            Some(joined) => leaves.put(path, Cell::Text(joined.join(";"))),
            // the exemplar's empty object is a tally: one text column
            None if self.entries == 0 && matches!(leaves, Leaves::Discover(_)) => {
                leaves.put(path, Cell::Text(String::new()))
            }
            None => Ok(()),
        }
    }
}

/// A list: one text column of its items joined by `;`.
struct List<'a, 's> {
    at: &'a mut At<'s>,
    items: Vec<String>,
}

impl List<'_, '_> {
    fn item<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<(), FlattenError> {
        self.items.push(text_of(value)?);
        Ok(())
    }

    fn end(self) -> Result<(), FlattenError> {
        let At { leaves, path } = self.at;
        leaves.put(path, Cell::Text(self.items.join(";")))
    }
}

/// A scalar as text (a list's item, a tally's key or count).
fn text_of<T: ?Sized + Serialize>(value: &T) -> Result<String, FlattenError> {
    let mut cells = discover(value)?;
    match cells.pop() {
        Some((_, cell)) if cells.is_empty() => Ok(match cell {
            Cell::Null => String::new(),
            Cell::Bool(v) => v.to_string(),
            Cell::U32(v) => v.to_string(),
            Cell::U64(v) => v.to_string(),
            Cell::I64(v) => v.to_string(),
            Cell::F64(v) => v.to_string(),
            Cell::Text(v) => v,
        }),
        _ => Err(FlattenError("a list or tally holds objects".to_string())),
    }
}

impl<'a, 's> Flattener<'a, 's> {
    fn leaf(self, cell: Cell) -> Result<(), FlattenError> {
        let At { leaves, path } = self.at;
        leaves.put(path, cell)
    }

    fn object(self) -> Object<'a, 's> {
        let joined = self.at.leaves.joins(&self.at.path).then(Vec::new);
        Object { at: self.at, joined, key: None, entries: 0 }
    }
}

impl<'a, 's> ser::Serializer for Flattener<'a, 's> {
    type Ok = ();
    type Error = FlattenError;
    type SerializeSeq = List<'a, 's>;
    type SerializeTuple = List<'a, 's>;
    type SerializeTupleStruct = List<'a, 's>;
    type SerializeTupleVariant = Impossible<(), FlattenError>;
    type SerializeMap = Object<'a, 's>;
    type SerializeStruct = Object<'a, 's>;
    type SerializeStructVariant = Impossible<(), FlattenError>;

    fn serialize_bool(self, v: bool) -> Result<(), FlattenError> {
        self.leaf(Cell::Bool(v))
    }
    fn serialize_i8(self, v: i8) -> Result<(), FlattenError> {
        self.leaf(Cell::I64(v.into()))
    }
    fn serialize_i16(self, v: i16) -> Result<(), FlattenError> {
        self.leaf(Cell::I64(v.into()))
    }
    fn serialize_i32(self, v: i32) -> Result<(), FlattenError> {
        self.leaf(Cell::I64(v.into()))
    }
    fn serialize_i64(self, v: i64) -> Result<(), FlattenError> {
        self.leaf(Cell::I64(v))
    }
    fn serialize_u8(self, v: u8) -> Result<(), FlattenError> {
        self.leaf(Cell::U32(v.into()))
    }
    fn serialize_u16(self, v: u16) -> Result<(), FlattenError> {
        self.leaf(Cell::U32(v.into()))
    }
    fn serialize_u32(self, v: u32) -> Result<(), FlattenError> {
        self.leaf(Cell::U32(v))
    }
    fn serialize_u64(self, v: u64) -> Result<(), FlattenError> {
        self.leaf(Cell::U64(v))
    }
    fn serialize_f32(self, v: f32) -> Result<(), FlattenError> {
        self.leaf(Cell::F64(v.into()))
    }
    fn serialize_f64(self, v: f64) -> Result<(), FlattenError> {
        self.leaf(Cell::F64(v))
    }
    fn serialize_char(self, v: char) -> Result<(), FlattenError> {
        self.leaf(Cell::Text(v.to_string()))
    }
    fn serialize_str(self, v: &str) -> Result<(), FlattenError> {
        self.leaf(Cell::Text(v.to_string()))
    }
    fn serialize_bytes(self, _: &[u8]) -> Result<(), FlattenError> {
        Err(FlattenError(format!("`{}` holds bytes, which no table column holds", self.at.path)))
    }
    fn serialize_none(self) -> Result<(), FlattenError> {
        // the cells under an absent object stay empty too
        match self.at.leaves {
            Leaves::Discover(_) => Err(FlattenError(format!("the exemplar lacks `{}`", self.at.path))),
            Leaves::Fill { .. } => Ok(()),
        }
    }
    fn serialize_some<T: ?Sized + Serialize>(self, value: &T) -> Result<(), FlattenError> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result<(), FlattenError> {
        self.leaf(Cell::Null)
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<(), FlattenError> {
        self.leaf(Cell::Null)
    }
    fn serialize_unit_variant(self, _: &'static str, _: u32, variant: &'static str) -> Result<(), FlattenError> {
        self.leaf(Cell::Text(variant.to_string()))
    }
    fn serialize_newtype_struct<T: ?Sized + Serialize>(self, _: &'static str, value: &T) -> Result<(), FlattenError> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<(), FlattenError> {
        self.at.under(variant, value)
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<List<'a, 's>, FlattenError> {
        Ok(List { at: self.at, items: Vec::new() })
    }
    fn serialize_tuple(self, len: usize) -> Result<List<'a, 's>, FlattenError> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_struct(self, _: &'static str, len: usize) -> Result<List<'a, 's>, FlattenError> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant, FlattenError> {
        Err(FlattenError(format!("`{}` is a tuple variant, which no table column holds", self.at.path)))
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Object<'a, 's>, FlattenError> {
        Ok(self.object())
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Object<'a, 's>, FlattenError> {
        Ok(self.object())
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant, FlattenError> {
        Err(FlattenError(format!("`{}` is a struct variant, which no table column holds", self.at.path)))
    }
}

/// A list's serde parts: each element or field one more item.
macro_rules! list_parts {
    ($($part:ident :: $add:ident),*) => {$(
        impl ser::$part for List<'_, '_> {
            type Ok = ();
            type Error = FlattenError;
            fn $add<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<(), FlattenError> {
                self.item(value)
            }
            fn end(self) -> Result<(), FlattenError> {
                List::end(self)
            }
        }
    )*};
}

list_parts!(SerializeSeq::serialize_element, SerializeTuple::serialize_element, SerializeTupleStruct::serialize_field);

impl ser::SerializeMap for Object<'_, '_> {
    type Ok = ();
    type Error = FlattenError;
    fn serialize_key<T: ?Sized + Serialize>(&mut self, key: &T) -> Result<(), FlattenError> {
        self.key = Some(text_of(key)?);
        Ok(())
    }
    fn serialize_value<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<(), FlattenError> {
        let key = self.key.take().ok_or_else(|| FlattenError("a map value without its key".to_string()))?;
        self.entry(&key, value)
    }
    fn end(self) -> Result<(), FlattenError> {
        Object::end(self)
    }
}

impl ser::SerializeStruct for Object<'_, '_> {
    type Ok = ();
    type Error = FlattenError;
    fn serialize_field<T: ?Sized + Serialize>(&mut self, key: &'static str, value: &T) -> Result<(), FlattenError> {
        self.entry(key, value)
    }
    fn end(self) -> Result<(), FlattenError> {
        Object::end(self)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    #[derive(Serialize)]
    struct Inner {
        gaps: u64,
        first_psn: Option<u32>,
    }

    #[derive(Serialize)]
    struct Record {
        id: u32,
        label: &'static str,
        ratio: Option<f64>,
        requests: Inner,
        #[serde(flatten)]
        sums: Inner,
        peer: Option<Inner>,
        ports: Vec<u16>,
        opcodes: BTreeMap<String, u64>,
        #[serde(skip_serializing_if = "Option::is_none")]
        host: Option<String>,
    }

    fn exemplar() -> Record {
        let inner = || Inner { gaps: 0, first_psn: Some(0) };
        Record {
            id: 0,
            label: "",
            ratio: Some(0.0),
            requests: inner(),
            sums: inner(),
            peer: Some(inner()),
            ports: Vec::new(),
            opcodes: BTreeMap::new(),
            host: Some(String::new()),
        }
    }

    #[test]
    fn an_exemplar_gives_its_keys_flattened_and_its_lists_and_tallies_as_text() {
        let schema = Schema::of(&exemplar()).unwrap();
        let names: Vec<&str> = schema.columns.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            [
                "id",
                "label",
                "ratio",
                "requests_gaps",
                "requests_first_psn",
                "gaps",
                "first_psn",
                "peer_gaps",
                "peer_first_psn",
                "ports",
                "opcodes",
                "host"
            ]
        );
        assert_eq!(schema.columns[0].1, Cell::U32(0));
        assert_eq!(schema.columns[3].1, Cell::U64(0));
        assert_eq!(schema.columns[9].1, Cell::Text(String::new()));
    }

    #[test]
    fn a_row_fills_its_cells_and_leaves_absent_ones_empty() {
        let schema = Schema::of(&exemplar()).unwrap();
        let record = Record {
            id: 7,
            label: "RC",
            ratio: None,
            requests: Inner { gaps: 2, first_psn: None },
            sums: Inner { gaps: 3, first_psn: Some(9) },
            peer: None,
            ports: vec![4791, 50000],
            opcodes: BTreeMap::from([("0x0a".to_string(), 3), ("0x11".to_string(), 2)]),
            host: None,
        };
        let text = |s: &str| Cell::Text(s.to_string());
        assert_eq!(
            schema.row(&record).unwrap(),
            [
                Cell::U32(7),
                text("RC"),
                Cell::Null,
                Cell::U64(2),
                Cell::Null,
                Cell::U64(3),
                Cell::U32(9),
                Cell::Null,
                Cell::Null,
                text("4791;50000"),
                text("0x0a=3;0x11=2"),
                Cell::Null
            ]
        );
    }

    #[test]
    fn an_exemplar_without_an_optional_value_is_refused() {
        let mut lacking = exemplar();
        lacking.peer = None;
        let e = Schema::of(&lacking).err().expect("refused");
        assert_eq!(e.to_string(), "the exemplar lacks `peer`");
    }
}
