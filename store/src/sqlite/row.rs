//! A row that a script's statement returned, read off the writer's own connection
//! (`writer`): its values by column name, decoded with the same [`Columns`] getters as a
//! sqlx row, so each row type keeps one decoder for both.

use std::sync::Arc;

use rusqlite::types::ValueRef;

use super::writer::Value;
use super::{Result, StoreError};
use crate::decode::Columns;

/// One row: the statement's column names (shared by its rows) and this row's values.
#[derive(Debug, Clone)]
pub(super) struct Row {
    names: Arc<[Box<str>]>,
    values: Vec<Value>,
}

impl Row {
    /// The current row of a statement whose columns are `names`.
    pub(super) fn read(names: &Arc<[Box<str>]>, row: &rusqlite::Row<'_>) -> Result<Row> {
        let values = (0..names.len())
            .map(|i| Value::read(row.get_ref(i)?))
            .collect::<Result<Vec<_>>>()?;
        Ok(Row {
            names: names.clone(),
            values,
        })
    }

    /// A row of `columns` (tests).
    #[cfg(test)]
    pub(super) fn of(columns: &[(&str, Value)]) -> Row {
        Row {
            names: columns.iter().map(|(n, _)| Box::from(*n)).collect(),
            values: columns.iter().map(|(_, v)| v.clone()).collect(),
        }
    }

    fn get(&self, col: &str) -> Result<&Value> {
        self.names
            .iter()
            .position(|n| &**n == col)
            .map(|i| &self.values[i])
            .ok_or_else(|| StoreError::Db(sqlx::Error::ColumnNotFound(col.to_string())))
    }
}

impl Value {
    /// A value as SQLite returned it. Text that is not UTF-8 is an error (the store writes
    /// only strings).
    fn read(v: ValueRef<'_>) -> Result<Value> {
        Ok(match v {
            ValueRef::Null => Value::Null,
            ValueRef::Integer(i) => Value::Int(i),
            ValueRef::Real(f) => Value::Real(f),
            ValueRef::Text(t) => Value::Text(
                std::str::from_utf8(t)
                    .map_err(|e| StoreError::Corrupt(format!("text that is not UTF-8: {e}")))?
                    .to_string(),
            ),
            ValueRef::Blob(b) => Value::Blob(b.to_vec()),
        })
    }

    fn kind(&self) -> &'static str {
        match self {
            Value::Null => "NULL",
            Value::Int(_) => "an integer",
            Value::Real(_) => "a real",
            Value::Text(_) => "text",
            Value::Blob(_) => "a blob",
        }
    }
}

/// A column that holds something else than asked: an error as `Row::try_get` reports it.
fn mismatch(col: &str, wanted: &str, found: &Value) -> StoreError {
    StoreError::Db(sqlx::Error::ColumnDecode {
        index: format!("{col:?}"),
        source: format!("expected {wanted}, found {}", found.kind()).into(),
    })
}

impl Columns for Row {
    fn int(&self, col: &str) -> Result<i64> {
        self.opt_int(col)?
            .ok_or_else(|| mismatch(col, "an integer", &Value::Null))
    }

    fn opt_int(&self, col: &str) -> Result<Option<i64>> {
        match self.get(col)? {
            Value::Null => Ok(None),
            Value::Int(i) => Ok(Some(*i)),
            v => Err(mismatch(col, "an integer", v)),
        }
    }

    fn opt_real(&self, col: &str) -> Result<Option<f64>> {
        match self.get(col)? {
            Value::Null => Ok(None),
            Value::Real(f) => Ok(Some(*f)),
            // An expression's number (`0`, `SUM` of integers) has no REAL affinity.
            Value::Int(i) => Ok(Some(*i as f64)),
            v => Err(mismatch(col, "a real", v)),
        }
    }

    fn boolean(&self, col: &str) -> Result<bool> {
        match self.get(col)? {
            Value::Int(i) => Ok(*i != 0),
            v => Err(mismatch(col, "a boolean", v)),
        }
    }

    fn string(&self, col: &str) -> Result<String> {
        self.text(col).map(str::to_string)
    }

    fn opt_string(&self, col: &str) -> Result<Option<String>> {
        Ok(self.opt_text(col)?.map(str::to_string))
    }

    fn text(&self, col: &str) -> Result<&str> {
        self.opt_text(col)?
            .ok_or_else(|| mismatch(col, "text", &Value::Null))
    }

    fn opt_text(&self, col: &str) -> Result<Option<&str>> {
        match self.get(col)? {
            Value::Null => Ok(None),
            Value::Text(s) => Ok(Some(s)),
            v => Err(mismatch(col, "text", v)),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
#[path = "row_tests.rs"]
mod tests;
