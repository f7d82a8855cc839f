//! Times the generation of every built-in site's bodies (the content a probe
//! run serves): `cargo run --release -p site --example generate`. Prints, per
//! site, its resources, its bytes and the best of 5 runs in ms. With
//! `-- --dump DIR`, also writes every body to DIR/SITE/HOST/PATH (a page's
//! `/` as `index.html`) to look at.

use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let dump = args
        .iter()
        .position(|a| a == "--dump")
        .and_then(|i| args.get(i + 1));
    let mut total = 0.0;
    for name in site::BUILTIN {
        let s = site::builtin(name, site::DEFAULT_SEED).unwrap();
        let mut best = f64::INFINITY;
        for _ in 0..5 {
            let t = Instant::now();
            let mut bytes = 0;
            for i in 0..s.resources.len() {
                bytes += s.body(i).len();
            }
            assert_eq!(bytes, s.total_bytes());
            best = best.min(t.elapsed().as_secs_f64() * 1e3);
        }
        total += best;
        println!(
            "{name:>18}: {:>4} resources {:>9} bytes {best:>8.2} ms",
            s.resources.len(),
            s.total_bytes()
        );
        if let Some(dir) = dump {
            for (i, r) in s.resources.iter().enumerate() {
                let path = if r.path.ends_with('/') {
                    format!("{}index.html", r.path)
                } else {
                    r.path.clone()
                };
                let file = std::path::Path::new(dir)
                    .join(name)
                    .join(&r.host)
                    .join(&path[1..]);
                std::fs::create_dir_all(file.parent().unwrap()).unwrap();
                std::fs::write(&file, s.body(i)).unwrap();
            }
        }
    }
    println!("{:>18}: {total:.2} ms", "all");
}
