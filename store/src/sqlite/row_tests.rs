//! A script's row decodes as a sqlx row does: by name, NULL only where asked for, and a
//! wrong type or a missing column an error rather than a default.

use super::*;

fn row() -> Row {
    Row::of(&[
        ("n", Value::Int(7)),
        ("flag", Value::Int(0)),
        ("cost", Value::Real(0.25)),
        ("zero", Value::Int(0)),
        ("name", Value::Text("a".into())),
        ("none", Value::Null),
    ])
}

/// Catches: a getter that reads the wrong column, or turns a NULL into a value.
#[test]
fn columns_read_by_name_with_null_only_where_optional() {
    let r = row();
    assert_eq!(r.int("n").unwrap(), 7);
    assert!(!r.boolean("flag").unwrap());
    assert_eq!(r.opt_real("cost").unwrap(), Some(0.25));
    assert_eq!(r.opt_real("zero").unwrap(), Some(0.0));
    assert_eq!(r.text("name").unwrap(), "a");
    assert_eq!(r.string("name").unwrap(), "a");
    assert_eq!(r.opt_int("none").unwrap(), None);
    assert_eq!(r.opt_text("none").unwrap(), None);
    assert!(r.int("none").is_err());
    assert!(r.text("none").is_err());
}

/// Catches: a value of another type read as a default, or a missing column as NULL.
#[test]
fn a_wrong_type_or_a_missing_column_is_an_error() {
    let r = row();
    assert!(r.text("n").is_err());
    assert!(r.int("name").is_err());
    assert!(r.boolean("name").is_err());
    assert!(r.opt_real("name").is_err());
    assert!(matches!(
        r.opt_int("missing"),
        Err(StoreError::Db(sqlx::Error::ColumnNotFound(_)))
    ));
}
