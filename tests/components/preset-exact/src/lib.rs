//! An alternative app/prompt preset, as a team would ship one in a pack:
//! exactly the preset `cautilus plugin new preset` and `pack add preset`
//! write (the template is included, so every test run builds it). A case
//! passes only when the final text is exactly the expected one (the
//! built-in preset asks for containment), and its contract declares one
//! suite field, `requireExpected`, checked by its JSON Schema.

include!("../../../../templates/preset-rust/src/lib.rs");
