//! The documentation holds: the generated reference equals what the binary generates, the README
//! stays a front door (at most [`README_MAX_LINES`] lines), every page of docs/ is in the book's
//! table of contents, and every relative link of the README, ARCHITECTURE.md and the book points
//! at a file that exists and, with a `#fragment`, at a heading it has (the book's own pages may
//! not link outside docs/, which the rendered book would not hold).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Component, Path, PathBuf};

use pulldown_cmark::{Event, HeadingLevel, Options, Parser, Tag, TagEnd};

use crate::common::{scratch, sitesim, workspace};

/// The README is the front door: what and why, install, the two commands, a Python example, a
/// picture and links; the rest is in the book.
const README_MAX_LINES: usize = 200;

#[test]
fn the_committed_reference_is_what_the_binary_generates() {
    let (_dir, out) = scratch();
    let result = sitesim(&["reference", "--out", out.to_str().unwrap()]);
    assert!(result.status.success(), "sitesim reference failed");
    let committed = workspace().join("docs/reference");
    let mut pages = 0;
    for entry in std::fs::read_dir(&out).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_str().unwrap().to_string();
        let generated = std::fs::read_to_string(&path).unwrap();
        let written = std::fs::read_to_string(committed.join(&name)).unwrap_or_default();
        assert!(
            generated == written,
            "docs/reference/{name} is not what the binary generates: run \
             `cargo run -p sitesim -- reference --out docs/reference` and commit the result"
        );
        pages += 1;
    }
    assert!(pages >= 4, "only {pages} generated pages");
}

#[test]
fn the_readme_is_a_front_door() {
    let readme = std::fs::read_to_string(workspace().join("README.md")).unwrap();
    let lines = readme.lines().count();
    assert!(
        lines <= README_MAX_LINES,
        "README.md has {lines} lines (at most {README_MAX_LINES}); move the rest into docs/"
    );
}

/// Every Markdown file under docs/, relative to docs/.
fn book_pages() -> Vec<PathBuf> {
    fn walk(dir: &Path, base: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                if path.file_name().is_some_and(|n| n != "book") {
                    walk(&path, base, out);
                }
            } else if path.extension().is_some_and(|e| e == "md") {
                out.push(path.strip_prefix(base).unwrap().to_path_buf());
            }
        }
    }
    let docs = workspace().join("docs");
    let mut pages = Vec::new();
    walk(&docs, &docs, &mut pages);
    pages.sort();
    pages
}

#[test]
fn every_page_of_the_book_is_in_its_table_of_contents() {
    let docs = workspace().join("docs");
    let summary = std::fs::read_to_string(docs.join("SUMMARY.md")).unwrap();
    let listed: BTreeSet<PathBuf> = links(&summary)
        .into_iter()
        .map(|(target, _)| PathBuf::from(target.split('#').next().unwrap_or_default()))
        .collect();
    for page in book_pages() {
        if page == Path::new("SUMMARY.md") {
            continue;
        }
        assert!(
            listed.contains(&page),
            "docs/{} is not in docs/SUMMARY.md, so the book leaves it out",
            page.display()
        );
    }
    for page in &listed {
        assert!(
            docs.join(page).is_file(),
            "docs/SUMMARY.md lists {}, which does not exist",
            page.display()
        );
    }
}

/// Every link and image target of a Markdown text, with its line.
fn links(text: &str) -> Vec<(String, usize)> {
    let line_of = |offset: usize| text[..offset].matches('\n').count() + 1;
    Parser::new_ext(text, Options::all())
        .into_offset_iter()
        .filter_map(|(event, range)| match event {
            Event::Start(Tag::Link { dest_url, .. } | Tag::Image { dest_url, .. }) => {
                Some((dest_url.to_string(), line_of(range.start)))
            }
            _ => None,
        })
        .collect()
}

/// The anchors of a Markdown text's headings, as mdBook (and GitHub) make them: lower case,
/// letters, digits, `-` and `_` kept, spaces as `-`, anything else dropped; a repeated heading
/// gets `-1`, `-2`, ...; an explicit `{#id}` is taken as given.
fn anchors(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    let mut heading: Option<(String, Option<String>)> = None;
    for event in Parser::new_ext(text, Options::all()) {
        match event {
            Event::Start(Tag::Heading { id, .. }) => {
                heading = Some((String::new(), id.map(|i| i.to_string())));
            }
            Event::Text(t) | Event::Code(t) => {
                if let Some((title, _)) = heading.as_mut() {
                    title.push_str(&t);
                }
            }
            Event::End(TagEnd::Heading(level)) => {
                let _: HeadingLevel = level;
                if let Some((title, id)) = heading.take() {
                    let base = id.unwrap_or_else(|| {
                        title
                            .trim()
                            .to_lowercase()
                            .chars()
                            .filter_map(|c| match c {
                                c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
                                c if c.is_whitespace() => Some('-'),
                                _ => None,
                            })
                            .collect()
                    });
                    let seen = counts.entry(base.clone()).or_insert(0);
                    out.insert(if *seen == 0 {
                        base.clone()
                    } else {
                        format!("{base}-{seen}")
                    });
                    *seen += 1;
                }
            }
            _ => {}
        }
    }
    out
}

/// `path` with `.` and `..` taken out (without touching the file system).
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

#[test]
fn every_relative_link_of_the_docs_resolves() {
    let root = workspace();
    let docs = root.join("docs");
    let mut files: Vec<PathBuf> = vec![root.join("README.md"), root.join("ARCHITECTURE.md")];
    files.extend(book_pages().into_iter().map(|p| docs.join(p)));
    let mut problems = Vec::new();
    let mut checked = 0;
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        let shown = file.strip_prefix(&root).unwrap().display().to_string();
        for (target, line) in links(&text) {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            checked += 1;
            let (path, fragment) = match target.split_once('#') {
                Some((path, fragment)) => (path, Some(fragment)),
                None => (target.as_str(), None),
            };
            let resolved = if path.is_empty() {
                file.clone()
            } else {
                normalize(&file.parent().unwrap().join(path))
            };
            if !resolved.exists() {
                problems.push(format!("{shown}:{line}: {target}: no such file"));
                continue;
            }
            if file.starts_with(&docs) && !resolved.starts_with(&docs) {
                problems.push(format!(
                    "{shown}:{line}: {target}: outside docs/, so not in the rendered book"
                ));
            }
            if let Some(fragment) = fragment {
                if resolved.extension().is_some_and(|e| e == "md") {
                    let target_text = std::fs::read_to_string(&resolved).unwrap();
                    if !anchors(&target_text).contains(fragment) {
                        problems.push(format!("{shown}:{line}: {target}: no such heading"));
                    }
                }
            }
        }
    }
    assert!(checked > 50, "only {checked} links found");
    assert!(
        problems.is_empty(),
        "broken links:\n{}",
        problems.join("\n")
    );
}

#[test]
fn anchors_follow_mdbook() {
    let text = "# A tour of the CLI\n## Replaying a trace\n## `sitesim run`: site-level\n## Replaying a trace\n## Custom {#mine}\n";
    let a = anchors(text);
    for id in [
        "a-tour-of-the-cli",
        "replaying-a-trace",
        "replaying-a-trace-1",
        "sitesim-run-site-level",
        "mine",
    ] {
        assert!(a.contains(id), "{id} not in {a:?}");
    }
}

/// The Slurm accounting guide's sacct command runs on the oldest Slurm it claims (22.05): every
/// field it always asks for is one a real Slurm 22.05 wrote (the header of the dump captured by
/// scripts/ci/slurm-workload.sh), and a field 22.05 refuses (`Restarts`, from 24.11) is added
/// only when `sacct --helpformat` lists it.
#[test]
fn the_sacct_command_of_the_guide_runs_on_slurm_22_05() {
    let guide = std::fs::read_to_string(workspace().join("docs/guide/slurm.md")).unwrap();
    let header =
        std::fs::read_to_string(workspace().join("tests/fixtures/sacct/real/sacct.txt")).unwrap();
    let known: BTreeSet<&str> = header.lines().next().unwrap().split('|').collect();
    let block = guide
        .split("```sh\n")
        .nth(1)
        .and_then(|b| b.split("```").next())
        .unwrap();
    let fields = block
        .lines()
        .find_map(|l| l.strip_prefix("fields="))
        .expect("the command's fields");
    let format = block
        .split("--format=")
        .nth(1)
        .and_then(|f| f.split_whitespace().next())
        .unwrap();
    assert_eq!(format, "$fields,SubmitLine", "{block}");
    for field in fields.split(',').chain(["SubmitLine"]) {
        assert!(
            known.contains(field),
            "{field} is not a Slurm 22.05 sacct field"
        );
    }
    for line in block.lines().filter(|l| l.contains("Restarts")) {
        assert!(
            line.starts_with("sacct --helpformat | grep -w Restarts > /dev/null && "),
            "{line}"
        );
    }
}
