//! Every experiment file in docs/examples parses: the files users copy and
//! the docs' commands run must not rot when the format changes.

use std::path::Path;

#[test]
fn every_example_experiment_parses() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/examples");
    let mut parsed = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "toml") {
            let text = std::fs::read_to_string(&path).unwrap();
            let name = path.display().to_string();
            if let Err(e) = results::experiment::parse(&name, &text) {
                panic!("{name}: {e}");
            }
            parsed += 1;
        }
    }
    assert!(parsed >= 5, "{parsed} example files in {}", dir.display());
}
