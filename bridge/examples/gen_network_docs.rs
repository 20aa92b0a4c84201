//! Rewrites docs/scenario.md's network tables from the committed schema
//! (ns3-scenarios/network-schema.json): `scripts/gen-network-docs.sh`.
//!
//! `gen_network_docs FILE` rewrites FILE in place; `gen_network_docs FILE
//! SCHEMA` takes the schema from a JSON file (`netloop-server --describe`).

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(file) = args.first() else {
        eprintln!("usage: gen_network_docs FILE [SCHEMA]");
        std::process::exit(2);
    };
    let schema = match args.get(1) {
        Some(path) => {
            let json = std::fs::read_to_string(path).unwrap_or_else(|e| fail(path, e));
            std::sync::Arc::new(
                bridge::network_schema::NetworkSchema::parse(&json)
                    .unwrap_or_else(|e| fail(path, e)),
            )
        }
        None => bridge::network_schema::standard(),
    };
    let text = std::fs::read_to_string(file).unwrap_or_else(|e| fail(file, e));
    let updated = bridge::network_docs::update(&text, &schema).unwrap_or_else(|e| fail(file, e));
    if updated != text {
        std::fs::write(file, updated).unwrap_or_else(|e| fail(file, e));
        eprintln!("{file}: network tables regenerated");
    }
}

fn fail(what: &str, e: impl std::fmt::Display) -> ! {
    eprintln!("gen_network_docs: {what}: {e}");
    std::process::exit(1)
}
