//! Loads one URL with headless Chromium and prints the load as JSON (a manual check):
//! `cargo run -p browser --example load_url -- http://127.0.0.1:8000/ h1|h2 [host=addr ...] [spki]`.

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let protocol = match args.get(2).map(String::as_str) {
        Some("h2") => proto::Protocol::H2,
        Some("https") => proto::Protocol::Https,
        _ => proto::Protocol::Http,
    };
    let resolve = args
        .iter()
        .skip(3)
        .filter_map(|a| a.split_once('='))
        .map(|(h, a)| (h.to_string(), a.parse().unwrap()))
        .collect();
    let spki = args
        .iter()
        .skip(3)
        .filter(|a| !a.contains('='))
        .cloned()
        .collect();
    let o = browser::ChromiumOptions {
        protocol,
        url: args[1].clone(),
        resolve,
        spki,
        timeout: std::time::Duration::from_secs(30),
        allow: Vec::new(),
        insecure: false,
        map: Vec::new(),
        ..browser::ChromiumOptions::default()
    };
    let profile = browser::new_profile().unwrap();
    let cmd = browser::command(&o, &profile).unwrap();
    let mut b = browser::Browser::spawn(cmd, profile).unwrap();
    let load = b.load_page(&o);
    println!("{}", serde_json::to_string_pretty(&load).unwrap());
}
