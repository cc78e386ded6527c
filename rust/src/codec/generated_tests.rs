//! The generated tables against the hand-written code that reads them.

use crate::codec::arrow;
use crate::codec::generated::arrow_column;

/// The schema builds its columns in the order the declaration lists them.
#[test]
fn arrow_columns_are_the_schemas() {
    let schema = arrow::schema();
    let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
    assert_eq!(names, arrow_column::ALL);
}
