//! A serde serializer that builds Python objects directly: structs and maps
//! become dicts, sequences become lists, scalars become `bool`, `int`,
//! `float` or `str`, `None` stays `None`.
//!
//! The result tables of the core are column structs (a struct of `Vec`s), so
//! serialising one gives a dict of column name -> list without going through
//! JSON (which would turn NaN into null) and without naming the columns here
//! (a column added to the core appears in Python by itself).

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyNone};
use pyo3::BoundObject;
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

type Res<'py> = Result<Bound<'py, PyAny>, Error>;

/// Convert `v` into a Python object.
pub fn to_py<'py, T: Serialize + ?Sized>(py: Python<'py>, v: &T) -> PyResult<Bound<'py, PyAny>> {
    v.serialize(Ser { py }).map_err(|e| e.0)
}

#[derive(Clone, Copy)]
struct Ser<'py> {
    py: Python<'py>,
}

impl<'py> Ser<'py> {
    fn obj<T>(self, v: T) -> Res<'py>
    where
        T: IntoPyObject<'py>,
        PyErr: From<T::Error>,
    {
        let o = v.into_pyobject(self.py).map_err(PyErr::from)?;
        Ok(o.into_any().into_bound())
    }
}

/// Collects the items of a sequence.
pub struct ListSer<'py> {
    py: Python<'py>,
    items: Vec<Bound<'py, PyAny>>,
}

impl<'py> ListSer<'py> {
    fn push<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), Error> {
        self.items.push(v.serialize(Ser { py: self.py })?);
        Ok(())
    }
    fn done(self) -> Res<'py> {
        Ok(PyList::new(self.py, self.items)?.into_any())
    }
}

/// Fills a dict from a map or a struct.
pub struct DictSer<'py> {
    py: Python<'py>,
    dict: Bound<'py, PyDict>,
    key: Option<Bound<'py, PyAny>>,
}

impl<'py> ser::Serializer for Ser<'py> {
    type Ok = Bound<'py, PyAny>;
    type Error = Error;
    type SerializeSeq = ListSer<'py>;
    type SerializeTuple = ListSer<'py>;
    type SerializeTupleStruct = ListSer<'py>;
    type SerializeTupleVariant = Impossible<Bound<'py, PyAny>, Error>;
    type SerializeMap = DictSer<'py>;
    type SerializeStruct = DictSer<'py>;
    type SerializeStructVariant = Impossible<Bound<'py, PyAny>, Error>;

    fn serialize_bool(self, v: bool) -> Res<'py> {
        self.obj(v)
    }
    fn serialize_i8(self, v: i8) -> Res<'py> {
        self.obj(v)
    }
    fn serialize_i16(self, v: i16) -> Res<'py> {
        self.obj(v)
    }
    fn serialize_i32(self, v: i32) -> Res<'py> {
        self.obj(v)
    }
    fn serialize_i64(self, v: i64) -> Res<'py> {
        self.obj(v)
    }
    fn serialize_i128(self, v: i128) -> Res<'py> {
        self.obj(v)
    }
    fn serialize_u8(self, v: u8) -> Res<'py> {
        self.obj(v)
    }
    fn serialize_u16(self, v: u16) -> Res<'py> {
        self.obj(v)
    }
    fn serialize_u32(self, v: u32) -> Res<'py> {
        self.obj(v)
    }
    fn serialize_u64(self, v: u64) -> Res<'py> {
        self.obj(v)
    }
    fn serialize_u128(self, v: u128) -> Res<'py> {
        self.obj(v)
    }
    fn serialize_f32(self, v: f32) -> Res<'py> {
        self.obj(f64::from(v))
    }
    fn serialize_f64(self, v: f64) -> Res<'py> {
        self.obj(v)
    }
    fn serialize_char(self, v: char) -> Res<'py> {
        self.obj(v)
    }
    fn serialize_str(self, v: &str) -> Res<'py> {
        self.obj(v)
    }
    fn serialize_bytes(self, v: &[u8]) -> Res<'py> {
        self.obj(v)
    }
    fn serialize_none(self) -> Res<'py> {
        Ok(PyNone::get(self.py).to_owned().into_any())
    }
    fn serialize_some<T: Serialize + ?Sized>(self, v: &T) -> Res<'py> {
        v.serialize(self)
    }
    fn serialize_unit(self) -> Res<'py> {
        self.serialize_none()
    }
    fn serialize_unit_struct(self, _name: &'static str) -> Res<'py> {
        self.serialize_none()
    }
    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _i: u32,
        variant: &'static str,
    ) -> Res<'py> {
        self.obj(variant)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        v: &T,
    ) -> Res<'py> {
        v.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _i: u32,
        variant: &'static str,
        v: &T,
    ) -> Res<'py> {
        let d = PyDict::new(self.py);
        d.set_item(variant, v.serialize(self)?)?;
        Ok(d.into_any())
    }
    fn serialize_seq(self, len: Option<usize>) -> Result<ListSer<'py>, Error> {
        Ok(ListSer {
            py: self.py,
            items: Vec::with_capacity(len.unwrap_or(0)),
        })
    }
    fn serialize_tuple(self, len: usize) -> Result<ListSer<'py>, Error> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_struct(
        self,
        _name: &'static str,
        len: usize,
    ) -> Result<ListSer<'py>, Error> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_variant(
        self,
        name: &'static str,
        _i: u32,
        variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeTupleVariant, Error> {
        Err(ser::Error::custom(format!(
            "tuple variant {name}::{variant} has no Python form"
        )))
    }
    fn serialize_map(self, _len: Option<usize>) -> Result<DictSer<'py>, Error> {
        Ok(DictSer {
            py: self.py,
            dict: PyDict::new(self.py),
            key: None,
        })
    }
    fn serialize_struct(self, _name: &'static str, len: usize) -> Result<DictSer<'py>, Error> {
        self.serialize_map(Some(len))
    }
    fn serialize_struct_variant(
        self,
        name: &'static str,
        _i: u32,
        variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeStructVariant, Error> {
        Err(ser::Error::custom(format!(
            "struct variant {name}::{variant} has no Python form"
        )))
    }
}

impl<'py> ser::SerializeSeq for ListSer<'py> {
    type Ok = Bound<'py, PyAny>;
    type Error = Error;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), Error> {
        self.push(v)
    }
    fn end(self) -> Res<'py> {
        self.done()
    }
}

impl<'py> ser::SerializeTuple for ListSer<'py> {
    type Ok = Bound<'py, PyAny>;
    type Error = Error;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), Error> {
        self.push(v)
    }
    fn end(self) -> Res<'py> {
        self.done()
    }
}

impl<'py> ser::SerializeTupleStruct for ListSer<'py> {
    type Ok = Bound<'py, PyAny>;
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), Error> {
        self.push(v)
    }
    fn end(self) -> Res<'py> {
        self.done()
    }
}

impl<'py> ser::SerializeMap for DictSer<'py> {
    type Ok = Bound<'py, PyAny>;
    type Error = Error;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, k: &T) -> Result<(), Error> {
        self.key = Some(k.serialize(Ser { py: self.py })?);
        Ok(())
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), Error> {
        let k = self
            .key
            .take()
            .ok_or_else(|| <Error as ser::Error>::custom("map value without a key"))?;
        self.dict.set_item(k, v.serialize(Ser { py: self.py })?)?;
        Ok(())
    }
    fn end(self) -> Res<'py> {
        Ok(self.dict.into_any())
    }
}

impl<'py> ser::SerializeStruct for DictSer<'py> {
    type Ok = Bound<'py, PyAny>;
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        v: &T,
    ) -> Result<(), Error> {
        self.dict.set_item(key, v.serialize(Ser { py: self.py })?)?;
        Ok(())
    }
    fn end(self) -> Res<'py> {
        Ok(self.dict.into_any())
    }
}
