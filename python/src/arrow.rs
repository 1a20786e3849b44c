//! Polars data frames handed to Python as an Arrow C stream (the Arrow PyCapsule interface,
//! `__arrow_c_stream__`): Python's polars takes their columns without copying them.

use std::ffi::CStr;

use polars::prelude::{CompatLevel, DataFrame, SchemaExt};
use polars_arrow::array::{Array, StructArray};
use polars_arrow::datatypes::{ArrowDataType, Field};
use polars_arrow::ffi::{ArrowArrayStream, export_iterator};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyCapsule;

/// The capsule name the Arrow PyCapsule interface gives a stream.
const STREAM: &CStr = c"arrow_array_stream";

/// Record batches of one schema, taken once by a consumer of `__arrow_c_stream__`.
#[pyclass(module = "rocescope._rocescope")]
pub struct ArrowStream {
    batches: Option<Vec<DataFrame>>,
}

impl ArrowStream {
    /// A stream of `batches` (at least one, which gives the schema when all are empty).
    pub fn new(batches: Vec<DataFrame>) -> ArrowStream {
        ArrowStream { batches: Some(batches) }
    }
}

/// The exported stream, owned by its capsule until a consumer moves it out (then its release
/// callback is cleared, and dropping it does nothing). The capsule's pointer is the stream's
/// own: transparent, it has the C struct's layout.
#[repr(transparent)]
struct Exported {
    _stream: ArrowArrayStream,
}

// SAFETY: the stream owns its batches' buffers, which are reference-counted and immutable; the
// Arrow C stream interface lets a consumer take it on any thread.
unsafe impl Send for Exported {}

#[pymethods]
impl ArrowStream {
    /// The batches as an Arrow C stream of struct arrays, one per batch.
    #[pyo3(signature = (requested_schema = None))]
    fn __arrow_c_stream__<'py>(
        &mut self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        // the columns are given in their own types; a requested schema is not negotiated
        let _ = requested_schema;
        let batches = self.batches.take().ok_or_else(|| PyValueError::new_err("the stream was taken already"))?;
        PyCapsule::new_with_value(py, Exported { _stream: export(batches)? }, STREAM)
    }
}

/// The batches' rows as struct arrays of their columns, in one stream.
fn export(mut batches: Vec<DataFrame>) -> PyResult<ArrowArrayStream> {
    let compat = CompatLevel::newest();
    let schema = batches.first().map(|df| df.schema().to_arrow(compat)).unwrap_or_default();
    let dtype = ArrowDataType::Struct(schema.iter_values().cloned().collect());
    if schema.is_empty() {
        return Err(PyValueError::new_err("a table needs a column at least"));
    }
    let mut arrays: Vec<Box<dyn Array>> = Vec::new();
    for df in &mut batches {
        df.rechunk_mut();
        for chunk in df.iter_chunks(compat, false) {
            let height = chunk.height();
            arrays.push(StructArray::new(dtype.clone(), height, chunk.into_arrays(), None).boxed());
        }
    }
    Ok(export_iterator(Box::new(arrays.into_iter().map(Ok)), Field::new("".into(), dtype, false)))
}
