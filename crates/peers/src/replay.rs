//! Imported (recorded) pages on real servers: the docroot holds each response's
//! body as `.replay/N` and a route table (`.replay/routes.json`: host, the exact
//! request target with its query string, status, content type, Location), and
//! each server's config is generated from the table so that it answers every
//! recorded URL — query string included — with the recorded bytes, content
//! type and status (a redirect with its Location), and anything else 404:
//! nginx a `map` of `$host$request_uri` to one exact internal location per
//! resource; Apache one mod_rewrite rule per resource on `THE_REQUEST` (the
//! raw request line); h2o an mruby handler with the table as a hash; caddy one
//! CEL `expression` matcher per resource on `{host}` and `{uri}`.

use std::io;
use std::path::{Path, PathBuf};

/// The directory, inside a docroot, of an imported page's bodies and route table.
pub(crate) const DIR: &str = ".replay";
const ROUTES: &str = "routes.json";

/// One recorded response.
#[derive(Debug, Clone)]
pub(crate) struct Route {
    /// Host name (no port), lower case.
    pub host: String,
    /// The request target as sent: path and query (`/a/b?x=1`).
    pub target: String,
    pub status: u16,
    pub content_type: String,
    /// A redirect's target, scheme-relative (`//host/path`), as recorded.
    pub location: Option<String>,
    /// The body's file.
    pub file: PathBuf,
}

impl Route {
    /// The redirect's Location under `scheme`, e.g. `https://host/path`.
    pub fn location_with(&self, scheme: &str) -> Option<String> {
        let l = self.location.as_deref()?;
        Some(if l.starts_with("//") {
            format!("{scheme}:{l}")
        } else {
            l.to_string()
        })
    }
}

/// Writes an imported page's bodies and route table into `dir` (plus one empty
/// directory per host, which servers that configure per host list).
pub(crate) fn write(site: &site::Site, dir: &Path) -> io::Result<()> {
    let rdir = dir.join(DIR);
    std::fs::create_dir_all(&rdir)?;
    let mut routes = Vec::new();
    for (i, r) in site.resources.iter().enumerate() {
        std::fs::create_dir_all(dir.join(&r.host))?;
        let rec = site.recorded(i);
        if rec.is_some_and(|rec| rec.method != "GET") {
            continue; // a real server's docroot answers GET only
        }
        let file = rdir.join(i.to_string());
        std::fs::write(&file, site.body(i))
            .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", file.display())))?;
        let status = rec.map_or(200, |r| r.status);
        let content_type = rec
            .and_then(|r| r.header("content-type"))
            .unwrap_or(r.kind.content_type())
            .to_string();
        let location = rec.and_then(|r| r.header("location")).map(str::to_string);
        routes.push(serde_json::json!({
            "host": r.host.to_lowercase(),
            "target": r.path,
            "status": status,
            "content_type": content_type,
            "location": location,
            "file": file,
        }));
    }
    std::fs::write(
        rdir.join(ROUTES),
        serde_json::to_vec(&serde_json::Value::Array(routes))?,
    )
}

/// The route table of `docroot`, or None for a generated site's docroot.
pub(crate) fn routes(docroot: &Path) -> io::Result<Option<Vec<Route>>> {
    let path = docroot.join(DIR).join(ROUTES);
    let text = match std::fs::read(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let v: Vec<serde_json::Value> = serde_json::from_slice(&text)?;
    let s = |r: &serde_json::Value, k: &str| r[k].as_str().unwrap_or_default().to_string();
    Ok(Some(
        v.iter()
            .map(|r| Route {
                host: s(r, "host"),
                target: s(r, "target"),
                status: r["status"].as_u64().unwrap_or(200) as u16,
                content_type: s(r, "content_type"),
                location: r["location"].as_str().map(str::to_string),
                file: PathBuf::from(s(r, "file")),
            })
            .collect(),
    ))
}

/// A double-quoted string for nginx, Apache, CEL and Ruby alike (`\` and `"`
/// escaped; URLs have neither unescaped, so this is rarely needed).
pub(crate) fn quote(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

/// nginx: a `map` (in `http`) and the locations (in each `server`).
pub(crate) fn nginx(routes: &[Route]) -> (String, String) {
    let longest = routes
        .iter()
        .map(|r| r.host.len() + r.target.len())
        .max()
        .unwrap_or(0);
    let bucket = (longest + 64).next_power_of_two().max(64);
    let mut map = format!(
        "  map_hash_bucket_size {bucket};\n  map_hash_max_size {};\n  map \"$host$request_uri\" $spdylab_replay {{\n    default /__replay/miss;\n",
        (routes.len() * 2).next_power_of_two().max(2048)
    );
    let mut locations = String::from(
        "    location / { rewrite ^ $spdylab_replay? last; }\n    location = /__replay/miss { internal; return 404; }\n",
    );
    for (i, r) in routes.iter().enumerate() {
        map.push_str(&format!(
            "    {} /__replay/{i};\n",
            quote(&format!("{}{}", r.host, r.target))
        ));
        let body = match (r.location_with("$scheme"), r.status) {
            // The recorded body with the redirect (`return` would write nginx's own page).
            (Some(l), s) if (300..400).contains(&s) => format!(
                "error_page 418 ={s} /__replay/{i}/redirect; return 418; }}\n    location = /__replay/{i}/redirect {{ internal; add_header Location {} always; types {{ }} default_type {}; alias {};",
                quote(&l),
                quote(&r.content_type),
                quote(&r.file.display().to_string())
            ),
            (_, 200) => format!(
                "types {{ }} default_type {}; alias {};",
                quote(&r.content_type),
                quote(&r.file.display().to_string())
            ),
            (_, s) => format!("return {s};"),
        };
        locations.push_str(&format!(
            "    location = /__replay/{i} {{ internal; {body} }}\n"
        ));
    }
    map.push_str("  }\n");
    (map, locations)
}

/// Apache's double-quoted argument (its parser unescapes only `\"`).
fn apache_quote(s: &str) -> String {
    format!("\"{}\"", s.replace('"', "\\\""))
}

/// A PCRE pattern matching `s` literally.
fn regex_escape(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if "\\.^$|?*+()[]{}".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// Apache: mod_rewrite rules for the virtual host of `scheme` (mod_status's
/// page kept); a redirect is a mod_asis file written into `dir` (status,
/// Location and the recorded body, where `R=` would write Apache's own page).
pub(crate) fn apache(routes: &[Route], scheme: &str, dir: &Path) -> io::Result<String> {
    let mut out = String::from("  RewriteEngine On\n  RewriteRule ^/server-status - [L]\n");
    for (i, r) in routes.iter().enumerate() {
        out.push_str(&format!(
            "  RewriteCond %{{HTTP_HOST}} {} [NC]\n  RewriteCond %{{THE_REQUEST}} {}\n",
            apache_quote(&format!("^{}(:[0-9]+)?$", regex_escape(&r.host))),
            apache_quote(&format!("^GET {} ", regex_escape(&r.target))),
        ));
        let rule = match (r.location_with(scheme), r.status) {
            (Some(l), s) if (300..400).contains(&s) => {
                let asis = dir.join(format!("replay-{i}-{scheme}.asis"));
                let mut file = format!(
                    "Status: {s}\nLocation: {l}\nContent-Type: {}\n\n",
                    r.content_type
                )
                .into_bytes();
                file.extend(std::fs::read(&r.file)?);
                std::fs::write(&asis, file)?;
                format!(
                    "{} [H=send-as-is,L]",
                    apache_quote(&asis.display().to_string())
                )
            }
            (_, 200) => {
                // The T flag's value ends at a comma.
                let ct = r.content_type.split(',').next().unwrap_or_default();
                format!(
                    "{} {}",
                    apache_quote(&r.file.display().to_string()),
                    apache_quote(&format!("[T={ct},L]"))
                )
            }
            (_, s) => format!("- [R={s},L]"),
        };
        out.push_str(&format!("  RewriteRule ^ {rule}\n"));
    }
    out.push_str("  RewriteRule ^ - [R=404,L]\n");
    Ok(out)
}

/// h2o: an mruby handler (Rack) answering from the table.
pub(crate) fn h2o_ruby(routes: &[Route]) -> String {
    let mut out = String::from("# spdylab: an imported page's responses\nroutes = {\n");
    for r in routes {
        out.push_str(&format!(
            "  {} => [{}, {}, {}, {}],\n",
            quote(&format!("{}{}", r.host, r.target)),
            r.status,
            quote(&r.content_type),
            r.location
                .as_deref()
                .filter(|_| (300..400).contains(&r.status))
                .map_or("nil".into(), quote),
            quote(&r.file.display().to_string()),
        ));
    }
    out.push_str(
        r#"}
lambda do |env|
  host = env["HTTP_HOST"].to_s.split(":")[0].to_s.downcase
  target = env["PATH_INFO"].to_s
  q = env["QUERY_STRING"].to_s
  target = target + "?" + q unless q.empty?
  r = env["REQUEST_METHOD"] == "GET" ? routes[host + target] : nil
  if r.nil?
    [404, {"content-type" => "text/plain"}, ["not recorded\n"]]
  else
    body = File.open(r[3], "rb") { |f| f.read }
    h = {"content-type" => r[1], "content-length" => body.bytesize.to_s}
    h["location"] = r[2].start_with?("//") ? env["rack.url_scheme"] + ":" + r[2] : r[2] if r[2]
    [r[0], h, [body]]
  end
end
"#,
    );
    out
}

/// caddy: named matchers and a `route` of `handle` blocks for a site block.
pub(crate) fn caddy(routes: &[Route], token: &dyn Fn(&str) -> String) -> String {
    let mut out = String::new();
    for (i, r) in routes.iter().enumerate() {
        // CEL: placeholders become placeholder("..."); the strings are CEL literals.
        out.push_str(&format!(
            "\t@replay{i} expression `{{host}} == {} && {{uri}} == {} && {{method}} == \"GET\"`\n",
            quote(&r.host),
            quote(&r.target)
        ));
    }
    out.push_str("\troute {\n");
    for (i, r) in routes.iter().enumerate() {
        let body = match (r.location_with("{scheme}"), r.status) {
            (Some(l), s) if (300..400).contains(&s) => format!(
                "header Content-Type {}\n\t\t\tredir {} {s}",
                token(&r.content_type),
                token(&l)
            ),
            (_, 200) => format!(
                "header Content-Type {}\n\t\t\trewrite * /{}\n\t\t\tfile_server {{\n\t\t\t\troot {}\n\t\t\t}}",
                token(&r.content_type),
                r.file.file_name().and_then(|n| n.to_str()).unwrap_or_default(),
                token(&r.file.parent().unwrap_or(Path::new("/")).display().to_string())
            ),
            (_, s) => format!("respond {s}"),
        };
        out.push_str(&format!("\t\thandle @replay{i} {{\n\t\t\t{body}\n\t\t}}\n"));
    }
    out.push_str("\t\trespond 404\n\t}\n");
    out
}
