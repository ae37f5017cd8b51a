//! `cautilus schema [ID]`: the JSON Schemas of the fixture and the packets
//! (the host's and those the built-in presets publish).

use std::process::ExitCode;

use anyhow::bail;
use clap::Args;

use crate::schema;

const EXAMPLES: &str = "\
Examples:
  cautilus schema
  cautilus schema cautilus.evaluation_input.v1 > evaluation_input.schema.json";

#[derive(Debug, Args)]
#[command(after_help = EXAMPLES)]
pub struct SchemaArgs {
    /// A schema id (`schemaVersion`); without one, lists the ids
    id: Option<String>,
}

pub fn run(args: SchemaArgs, registry: &crate::plugin::Registry) -> anyhow::Result<ExitCode> {
    // The built-in presets publish their packets' schemas and case shapes.
    let catalog = schema::Catalog::builtin(registry)?;
    let Some(id) = args.id else {
        for id in catalog.ids() {
            crate::outln!("{id}");
        }
        return Ok(ExitCode::SUCCESS);
    };
    let Some(schema) = catalog.schema(&id) else {
        bail!(
            "no schema `{id}`; known: {} (run `cautilus schema` to list them)",
            catalog.ids().join(", ")
        );
    };
    crate::outln!("{}", serde_json::to_string_pretty(&schema)?);
    Ok(ExitCode::SUCCESS)
}
