//! libFuzzer target: arbitrary bytes as a whole HAR file, imported by
//! `site::har::import` (issue 36). Never a panic; an error is one line; a
//! HAR that imports makes a site whose tree holds (the page first, every
//! other resource under an earlier one, recorded bodies as long as their
//! resource, the report's counts the site's) and whose `site.json` reads
//! back the same.
#![no_main]

use libfuzzer_sys::fuzz_target;
use site::har::{import, load, store};
use std::collections::HashMap;

fuzz_target!(|data: &[u8]| {
    match import("fuzz", data) {
        Err(e) => assert!(!e.0.is_empty() && !e.0.contains('\n'), "{:?}", e.0),
        Ok((site, report)) => {
            let n = site.resources.len();
            assert!(n >= 1);
            assert_eq!(report.resources, n);
            assert_eq!(site.resources[0].parent, None);
            for (i, r) in site.resources.iter().enumerate().skip(1) {
                assert!(r.parent.is_some_and(|p| p < i), "{i}: {:?}", r.parent);
            }
            for i in 0..n {
                let rec = site.recorded(i).unwrap();
                if let Some(b) = &rec.body {
                    assert_eq!(b.len(), site.resources[i].size, "{i}");
                }
                if let Some(t) = rec.redirect_to {
                    assert!(t > i && t < n, "{i} redirects to {t}");
                }
            }
            let total: u128 = site.resources.iter().map(|r| r.size as u128).sum();
            assert_eq!(report.bytes as u128, total);
            let (json, files) = store(&site, &report);
            let files: HashMap<String, Vec<u8>> = files.into_iter().collect();
            let (back, report2) = load(&json, |f| Ok(files[f].clone())).unwrap();
            assert_eq!(back.resources, site.resources);
            assert_eq!(report2, report);
        }
    }
});
