//! The text and JSON of `spdylab profiles`: the named networks
//! (`link::PROFILES`), each with its rates, RTT and source.

use link::Profile;

/// A header, then a row per profile: name, rates, RTT, source.
pub fn table(profiles: &[Profile]) -> Vec<String> {
    let mut out = vec![format!(
        "{:<11} {:>9} {:>9} {:>7}  source",
        "profile", "down", "up", "rtt"
    )];
    for p in profiles {
        out.push(format!(
            "{:<11} {:>9} {:>9} {:>7}  {}",
            p.name,
            p.down.to_string(),
            p.up.to_string(),
            format!("{}ms", p.rtt.as_millis()),
            p.source
        ));
    }
    out
}

/// `spdylab profiles --json`: schema 1, every profile with its rates as
/// written and in bit/s, its RTT in ms and its source.
pub fn document(profiles: &[Profile]) -> serde_json::Value {
    let list: Vec<serde_json::Value> = profiles
        .iter()
        .map(|p| {
            serde_json::json!({
                "name": p.name,
                "down": p.down.to_string(),
                "up": p.up.to_string(),
                "down_bps": p.down.0,
                "up_bps": p.up.0,
                "rtt_ms": p.rtt.as_secs_f64() * 1e3,
                "source": p.source,
            })
        })
        .collect();
    serde_json::json!({"schema": 1, "profiles": list})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_and_an_entry_per_profile_under_one_header() {
        let lines = table(link::PROFILES);
        assert_eq!(lines.len(), link::PROFILES.len() + 1);
        assert!(lines[0].starts_with("profile") && lines[0].ends_with("source"));
        let cable = link::profile("cable").unwrap();
        let row = lines.iter().find(|l| l.starts_with("cable ")).unwrap();
        assert!(row.ends_with(cable.source), "{row}");
        let doc = document(link::PROFILES);
        assert_eq!(
            doc["profiles"].as_array().unwrap().len(),
            link::PROFILES.len()
        );
        assert_eq!(doc["profiles"][0]["name"], link::PROFILES[0].name);
    }
}
