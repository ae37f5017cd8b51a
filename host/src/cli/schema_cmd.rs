//! `cautilus schema [ID]`: the JSON Schemas of the fixture and the packets.

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

pub fn run(args: SchemaArgs) -> anyhow::Result<ExitCode> {
    let Some(id) = args.id else {
        for id in schema::IDS {
            println!("{id}");
        }
        return Ok(ExitCode::SUCCESS);
    };
    let Some(schema) = schema::schema(&id) else {
        bail!(
            "no schema `{id}`; known: {} (run `cautilus schema` to list them)",
            schema::IDS.join(", ")
        );
    };
    println!("{}", serde_json::to_string_pretty(&schema)?);
    Ok(ExitCode::SUCCESS)
}
