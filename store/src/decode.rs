//! Typed column getters shared by both engines' rows, so each row type has one decoder
//! (next to the row type, in its area module) generic over the engine's row.
//!
//! [`Columns`] is implemented once for any sqlx row whose database decodes the types the
//! store reads: `i64` (every integer, every time in unix ms), `f64`, `bool`, and text.
//! Text comes back borrowed (`&str`) where the decoder only parses it, owned (`String`)
//! where the row keeps it. Both engines select the same shape: where a column is stored
//! differently (PostgreSQL's `JSONB` `sessions.origin`), the query casts it (`origin::text`).

use sqlx::{ColumnIndex, Decode, Row, Type};

use super::Result;

/// The columns of a row, by name, as the store's types. A failed read (a missing column, a
/// NULL where none is allowed, a type the column cannot decode to) is
/// [`super::StoreError::Db`], as `Row::try_get` reports it.
pub(super) trait Columns {
    fn int(&self, col: &str) -> Result<i64>;
    fn opt_int(&self, col: &str) -> Result<Option<i64>>;
    fn opt_real(&self, col: &str) -> Result<Option<f64>>;
    fn boolean(&self, col: &str) -> Result<bool>;
    fn string(&self, col: &str) -> Result<String>;
    fn opt_string(&self, col: &str) -> Result<Option<String>>;
    fn text(&self, col: &str) -> Result<&str>;
    fn opt_text(&self, col: &str) -> Result<Option<&str>>;
}

impl<R> Columns for R
where
    R: Row,
    for<'a> &'a str: ColumnIndex<R>,
    for<'r> i64: Decode<'r, R::Database>,
    i64: Type<R::Database>,
    for<'r> f64: Decode<'r, R::Database>,
    f64: Type<R::Database>,
    for<'r> bool: Decode<'r, R::Database>,
    bool: Type<R::Database>,
    for<'r> String: Decode<'r, R::Database>,
    String: Type<R::Database>,
    for<'r> &'r str: Decode<'r, R::Database> + Type<R::Database>,
{
    #[inline]
    fn int(&self, col: &str) -> Result<i64> {
        Ok(self.try_get(col)?)
    }

    #[inline]
    fn opt_int(&self, col: &str) -> Result<Option<i64>> {
        Ok(self.try_get(col)?)
    }

    #[inline]
    fn opt_real(&self, col: &str) -> Result<Option<f64>> {
        Ok(self.try_get(col)?)
    }

    #[inline]
    fn boolean(&self, col: &str) -> Result<bool> {
        Ok(self.try_get(col)?)
    }

    #[inline]
    fn string(&self, col: &str) -> Result<String> {
        Ok(self.try_get(col)?)
    }

    #[inline]
    fn opt_string(&self, col: &str) -> Result<Option<String>> {
        Ok(self.try_get(col)?)
    }

    #[inline]
    fn text(&self, col: &str) -> Result<&str> {
        Ok(self.try_get(col)?)
    }

    #[inline]
    fn opt_text(&self, col: &str) -> Result<Option<&str>> {
        Ok(self.try_get(col)?)
    }
}
