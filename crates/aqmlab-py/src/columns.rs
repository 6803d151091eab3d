//! Result tables to Python as Arrow buffers, with every allocation checked.
//!
//! A result table of the core is a column struct (a struct of `Vec`s of
//! scalars). Serialising one here gives a dict of column name -> tuple
//! `(type, rows, data, offsets)`:
//!
//! - `type` is `"bool"`, `"i64"`, `"u32"`, `"u64"`, `"f64"` or `"str"`
//!   (`"null"` for an empty column, whose type nothing tells);
//! - `data` is a `bytes` object: the values in native byte order (one byte
//!   per `bool`), or for `"str"` the UTF-8 text of every value one after the
//!   other;
//! - `offsets` is `None`, or for `"str"` a `bytes` object of `rows + 1`
//!   `i32` offsets into `data` (Arrow's `string` layout; `"large_str"` and
//!   `i64` offsets when the text passes 2 GiB).
//!
//! The Python side wraps the buffers as Arrow arrays without copying them
//! (`aqmlab.api.columns_to_table`). Against one Python object per value this
//! costs a fifth of the memory, and it can fail cleanly: every buffer is
//! reserved with `try_reserve` and every `bytes` object is created with a
//! checked allocation, so a run whose results do not fit raises
//! `MemoryError` instead of aborting the process or panicking inside PyO3.
//! A column added to the core appears in Python by itself; a
//! field that is not a column of scalars is an error (a bug, not user
//! input).

use pyo3::exceptions::{PyMemoryError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use serde::ser::{self, Impossible, Serialize};
use std::fmt;

/// A Python error raised while serialising.
#[derive(Debug)]
pub struct Error(pub PyErr);

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl std::error::Error for Error {}

impl ser::Error for Error {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        Error(PyValueError::new_err(msg.to_string()))
    }
}

impl From<PyErr> for Error {
    fn from(e: PyErr) -> Self {
        Error(e)
    }
}

/// Convert the column struct `table` into a dict of column name -> buffers.
pub fn table<'py, T: Serialize + ?Sized>(
    py: Python<'py>,
    table: &T,
) -> PyResult<Bound<'py, PyAny>> {
    table.serialize(TableSer { py }).map_err(|e| e.0)
}

fn custom(msg: impl fmt::Display) -> Error {
    <Error as ser::Error>::custom(msg)
}

fn no_memory(what: &str, bytes: usize) -> Error {
    Error(PyMemoryError::new_err(format!(
        "out of memory: {bytes} more bytes for column {what} of the results"
    )))
}

/// The value type of a column, fixed by its first value.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    Bool,
    I64,
    U32,
    U64,
    F64,
    Str,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Bool => "bool",
            Kind::I64 => "i64",
            Kind::U32 => "u32",
            Kind::U64 => "u64",
            Kind::F64 => "f64",
            Kind::Str => "str",
        }
    }
    /// Bytes per value in `data` (a typical length for strings).
    fn width(self) -> usize {
        match self {
            Kind::Bool => 1,
            Kind::U32 => 4,
            Kind::I64 | Kind::U64 | Kind::F64 | Kind::Str => 8,
        }
    }
}

/// One column being filled.
struct Column {
    name: &'static str,
    kind: Option<Kind>,
    /// Rows announced by the sequence (reserved at the first value).
    expect: usize,
    rows: usize,
    data: Vec<u8>,
    /// `"str"` only: offsets of the values' ends, after a leading 0.
    offsets: Vec<i64>,
}

impl Column {
    fn grow<T>(v: &mut Vec<T>, more: usize, what: &str) -> Result<(), Error> {
        if v.capacity() - v.len() < more {
            v.try_reserve(more)
                .map_err(|_| no_memory(what, more * std::mem::size_of::<T>()))?;
        }
        Ok(())
    }

    fn push(&mut self, kind: Kind, bytes: &[u8]) -> Result<(), Error> {
        match self.kind {
            Some(k) if k == kind => {}
            Some(k) => {
                return Err(custom(format!(
                    "column {} mixes {} and {} values",
                    self.name,
                    k.name(),
                    kind.name()
                )))
            }
            None => {
                self.kind = Some(kind);
                let first = self.expect.max(1);
                self.data
                    .try_reserve_exact(first * kind.width())
                    .map_err(|_| no_memory(self.name, first * kind.width()))?;
                if kind == Kind::Str {
                    self.offsets
                        .try_reserve_exact(first + 1)
                        .map_err(|_| no_memory(self.name, (first + 1) * 8))?;
                    self.offsets.push(0);
                }
            }
        }
        Self::grow(&mut self.data, bytes.len(), self.name)?;
        self.data.extend_from_slice(bytes);
        if kind == Kind::Str {
            Self::grow(&mut self.offsets, 1, self.name)?;
            self.offsets.push(self.data.len() as i64);
        }
        self.rows += 1;
        Ok(())
    }

    /// The Python tuple `(type, rows, data, offsets)`; the Rust buffers are
    /// freed as soon as their copy exists.
    fn finish(mut self, py: Python<'_>) -> Result<Bound<'_, PyAny>, Error> {
        let data = to_bytes(py, std::mem::take(&mut self.data), self.name)?;
        let n = self.offsets.len();
        // i32 offsets (Arrow `string`) unless the text passes 2 GiB.
        let small = i32::try_from(self.offsets.last().copied().unwrap_or(0)).is_ok();
        let offsets = if self.kind == Some(Kind::Str) {
            let width = if small { 4 } else { 8 };
            let mut b = Vec::new();
            b.try_reserve_exact(n * width)
                .map_err(|_| no_memory(self.name, n * width))?;
            for o in std::mem::take(&mut self.offsets) {
                if small {
                    b.extend_from_slice(&(o as i32).to_ne_bytes());
                } else {
                    b.extend_from_slice(&o.to_ne_bytes());
                }
            }
            Some(to_bytes(py, b, self.name)?)
        } else {
            None
        };
        let kind = match self.kind {
            None => "null",
            Some(Kind::Str) if !small => "large_str",
            Some(k) => k.name(),
        };
        let t = (kind, self.rows, data, offsets).into_pyobject(py)?;
        Ok(t.into_any())
    }
}

/// A `bytes` object holding `v` (`MemoryError` when Python has no room).
fn to_bytes<'py>(py: Python<'py>, v: Vec<u8>, what: &str) -> Result<Bound<'py, PyBytes>, Error> {
    let b = PyBytes::new_with(py, v.len(), |buf| {
        buf.copy_from_slice(&v);
        Ok(())
    })
    .map_err(|_| no_memory(what, v.len()))?;
    drop(v);
    Ok(b)
}

/// Serialises the table struct into a dict.
struct TableSer<'py> {
    py: Python<'py>,
}

struct TableFields<'py> {
    py: Python<'py>,
    dict: Bound<'py, PyDict>,
}

/// Serialises one field: it must be a sequence.
struct ColumnSer<'py> {
    py: Python<'py>,
    name: &'static str,
}

/// Serialises one value into the column.
struct ValueSer<'a> {
    col: &'a mut Column,
}

struct Filling<'py> {
    py: Python<'py>,
    col: Column,
}

macro_rules! not_a {
    ($what:expr; $($f:ident($($a:ty),*) -> $r:ty;)*) => {
        $(fn $f(self, $(_: $a),*) -> Result<$r, Error> {
            Err(custom(format!("a result table must be {}", $what)))
        })*
    };
}

/// The scalar methods, refused: the table and each of its fields must be
/// compound (a struct, a sequence).
macro_rules! no_scalars {
    ($what:expr) => {
        not_a!($what;
            serialize_bool(bool) -> Self::Ok; serialize_i8(i8) -> Self::Ok;
            serialize_i16(i16) -> Self::Ok; serialize_i32(i32) -> Self::Ok;
            serialize_i64(i64) -> Self::Ok; serialize_u8(u8) -> Self::Ok;
            serialize_u16(u16) -> Self::Ok; serialize_u32(u32) -> Self::Ok;
            serialize_u64(u64) -> Self::Ok; serialize_f32(f32) -> Self::Ok;
            serialize_f64(f64) -> Self::Ok; serialize_char(char) -> Self::Ok;
            serialize_str(&str) -> Self::Ok; serialize_bytes(&[u8]) -> Self::Ok;
            serialize_none() -> Self::Ok; serialize_unit() -> Self::Ok;
            serialize_unit_struct(&'static str) -> Self::Ok;
            serialize_unit_variant(&'static str, u32, &'static str) -> Self::Ok;
            serialize_tuple(usize) -> Self::SerializeTuple;
            serialize_tuple_struct(&'static str, usize) -> Self::SerializeTupleStruct;
            serialize_tuple_variant(&'static str, u32, &'static str, usize) -> Self::SerializeTupleVariant;
            serialize_map(Option<usize>) -> Self::SerializeMap;
            serialize_struct_variant(&'static str, u32, &'static str, usize) -> Self::SerializeStructVariant;
        );
        not_generic!($what; serialize_some;);
        fn serialize_newtype_struct<T: Serialize + ?Sized>(
            self,
            _name: &'static str,
            v: &T,
        ) -> Result<Self::Ok, Error> {
            v.serialize(self)
        }
        fn serialize_newtype_variant<T: Serialize + ?Sized>(
            self,
            _name: &'static str,
            _i: u32,
            _variant: &'static str,
            _v: &T,
        ) -> Result<Self::Ok, Error> {
            Err(custom(format!("a result table must be {}", $what)))
        }
    };
}

macro_rules! not_generic {
    ($what:expr; $($f:ident;)*) => {
        $(fn $f<T: Serialize + ?Sized>(self, _: &T) -> Result<Self::Ok, Error> {
            Err(custom(format!("a result table must be {}", $what)))
        })*
    };
}

impl<'py> ser::Serializer for TableSer<'py> {
    type Ok = Bound<'py, PyAny>;
    type Error = Error;
    type SerializeSeq = Impossible<Self::Ok, Error>;
    type SerializeTuple = Impossible<Self::Ok, Error>;
    type SerializeTupleStruct = Impossible<Self::Ok, Error>;
    type SerializeTupleVariant = Impossible<Self::Ok, Error>;
    type SerializeMap = Impossible<Self::Ok, Error>;
    type SerializeStruct = TableFields<'py>;
    type SerializeStructVariant = Impossible<Self::Ok, Error>;

    fn serialize_struct(self, _name: &'static str, _len: usize) -> Result<TableFields<'py>, Error> {
        Ok(TableFields {
            py: self.py,
            dict: PyDict::new(self.py),
        })
    }
    no_scalars!("a struct of columns");
    not_a!("a struct of columns"; serialize_seq(Option<usize>) -> Self::SerializeSeq;);
}

impl<'py> ser::SerializeStruct for TableFields<'py> {
    type Ok = Bound<'py, PyAny>;
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        v: &T,
    ) -> Result<(), Error> {
        let col = v.serialize(ColumnSer {
            py: self.py,
            name: key,
        })?;
        self.dict.set_item(key, col)?;
        Ok(())
    }
    fn end(self) -> Result<Self::Ok, Error> {
        Ok(self.dict.into_any())
    }
}

impl<'py> ser::Serializer for ColumnSer<'py> {
    type Ok = Bound<'py, PyAny>;
    type Error = Error;
    type SerializeSeq = Filling<'py>;
    type SerializeTuple = Impossible<Self::Ok, Error>;
    type SerializeTupleStruct = Impossible<Self::Ok, Error>;
    type SerializeTupleVariant = Impossible<Self::Ok, Error>;
    type SerializeMap = Impossible<Self::Ok, Error>;
    type SerializeStruct = Impossible<Self::Ok, Error>;
    type SerializeStructVariant = Impossible<Self::Ok, Error>;

    fn serialize_seq(self, len: Option<usize>) -> Result<Filling<'py>, Error> {
        Ok(Filling {
            py: self.py,
            col: Column {
                name: self.name,
                kind: None,
                expect: len.unwrap_or(0),
                rows: 0,
                data: Vec::new(),
                offsets: Vec::new(),
            },
        })
    }
    no_scalars!("a struct of columns (sequences)");
    not_a!("a struct of columns (sequences)";
        serialize_struct(&'static str, usize) -> Self::SerializeStruct;);
}

impl<'py> ser::SerializeSeq for Filling<'py> {
    type Ok = Bound<'py, PyAny>;
    type Error = Error;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), Error> {
        v.serialize(ValueSer { col: &mut self.col })
    }
    fn end(self) -> Result<Self::Ok, Error> {
        self.col.finish(self.py)
    }
}

impl ser::Serializer for ValueSer<'_> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = Impossible<(), Error>;
    type SerializeTuple = Impossible<(), Error>;
    type SerializeTupleStruct = Impossible<(), Error>;
    type SerializeTupleVariant = Impossible<(), Error>;
    type SerializeMap = Impossible<(), Error>;
    type SerializeStruct = Impossible<(), Error>;
    type SerializeStructVariant = Impossible<(), Error>;

    fn serialize_bool(self, v: bool) -> Result<(), Error> {
        self.col.push(Kind::Bool, &[u8::from(v)])
    }
    fn serialize_i8(self, v: i8) -> Result<(), Error> {
        self.serialize_i64(v.into())
    }
    fn serialize_i16(self, v: i16) -> Result<(), Error> {
        self.serialize_i64(v.into())
    }
    fn serialize_i32(self, v: i32) -> Result<(), Error> {
        self.serialize_i64(v.into())
    }
    fn serialize_i64(self, v: i64) -> Result<(), Error> {
        self.col.push(Kind::I64, &v.to_ne_bytes())
    }
    fn serialize_u8(self, v: u8) -> Result<(), Error> {
        self.serialize_u32(v.into())
    }
    fn serialize_u16(self, v: u16) -> Result<(), Error> {
        self.serialize_u32(v.into())
    }
    fn serialize_u32(self, v: u32) -> Result<(), Error> {
        self.col.push(Kind::U32, &v.to_ne_bytes())
    }
    fn serialize_u64(self, v: u64) -> Result<(), Error> {
        self.col.push(Kind::U64, &v.to_ne_bytes())
    }
    fn serialize_f32(self, v: f32) -> Result<(), Error> {
        self.serialize_f64(v.into())
    }
    fn serialize_f64(self, v: f64) -> Result<(), Error> {
        self.col.push(Kind::F64, &v.to_ne_bytes())
    }
    fn serialize_char(self, v: char) -> Result<(), Error> {
        self.serialize_str(v.encode_utf8(&mut [0; 4]))
    }
    fn serialize_str(self, v: &str) -> Result<(), Error> {
        self.col.push(Kind::Str, v.as_bytes())
    }
    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _i: u32,
        variant: &'static str,
    ) -> Result<(), Error> {
        self.serialize_str(variant)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        v: &T,
    ) -> Result<(), Error> {
        v.serialize(self)
    }
    not_a!("a struct of columns of scalars";
        serialize_bytes(&[u8]) -> (); serialize_none() -> ();
        serialize_unit() -> (); serialize_unit_struct(&'static str) -> ();
        serialize_seq(Option<usize>) -> Self::SerializeSeq;
        serialize_tuple(usize) -> Self::SerializeTuple;
        serialize_tuple_struct(&'static str, usize) -> Self::SerializeTupleStruct;
        serialize_tuple_variant(&'static str, u32, &'static str, usize) -> Self::SerializeTupleVariant;
        serialize_map(Option<usize>) -> Self::SerializeMap;
        serialize_struct(&'static str, usize) -> Self::SerializeStruct;
        serialize_struct_variant(&'static str, u32, &'static str, usize) -> Self::SerializeStructVariant;
    );
    not_generic!("a struct of columns of scalars"; serialize_some;);
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _i: u32,
        _variant: &'static str,
        _v: &T,
    ) -> Result<(), Error> {
        Err(custom(
            "a result table must be a struct of columns of scalars",
        ))
    }
}
