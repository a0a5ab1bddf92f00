//! The tour of the command line (docs/guide/tour.md, the book's "A tour of the CLI") matches
//! the binary: every `$ sitesim ...` example of the page is run and must print exactly the
//! lines shown under it (stdout, then stderr). The examples run in a fresh directory `work` whose sibling `shared` links to
//! the traces (so `../shared/traces/...` works as in the checkout), with the `broken.swf` the
//! tour describes.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed test should panic

use crate::common;

use common::{scratch, shared, sitesim_in, stderr, stdout, workspace};

/// The `broken.swf` of the tour: a header, one good job, and a job whose run time (field 4)
/// reads "sixty", on line 3.
const BROKEN_SWF: &str = "; MaxProcs: 4\n\
1 0 0 60 1 -1 -1 1 60 -1 1 1 1 -1 1 -1 -1 -1\n\
2 10 0 sixty 1 -1 -1 1 60 -1 1 1 1 -1 1 -1 -1 -1\n";

/// (command line, expected output) of every example in the tour section.
fn tour_examples() -> Vec<(String, String)> {
    let tour = std::fs::read_to_string(workspace().join("docs/guide/tour.md")).unwrap();
    let mut examples = Vec::new();
    let mut blocks = tour.split("```text\n").skip(1);
    for block in blocks.by_ref() {
        let body = &block[..block.find("```").expect("a closed code block")];
        let Some((first, output)) = body.split_once('\n') else {
            continue;
        };
        if let Some(command) = first.strip_prefix("$ sitesim ") {
            examples.push((command.to_string(), output.to_string()));
        }
    }
    examples
}

#[test]
fn every_example_of_the_tour_prints_what_the_tour_shows() {
    let examples = tour_examples();
    assert!(
        examples.len() >= 3,
        "the tour should hold the run, replay and error examples, found {}",
        examples.len()
    );
    for (command, expected) in examples {
        let (dir, _) = scratch();
        let work = dir.path().join("work");
        std::fs::create_dir(&work).unwrap();
        std::os::unix::fs::symlink(shared(), dir.path().join("shared")).unwrap();
        std::fs::write(work.join("broken.swf"), BROKEN_SWF).unwrap();
        let args: Vec<&str> = command.split_whitespace().collect();
        let out = sitesim_in(&work, &args);
        let printed = without_extensions(&format!("{}{}", stdout(&out), stderr(&out)));
        assert_eq!(
            printed, expected,
            "`sitesim {command}` prints something else than docs/guide/tour.md shows"
        );
    }
}

/// `printed` without what a recipe's extension adds to a run's output (ARCHITECTURE.md's
/// recipes are checked with toys in, and the tour shows sitesim's own): the measures printed
/// after the summary, and the files of formats beyond sitesim's own.
fn without_extensions(printed: &str) -> String {
    let mut kept = Vec::new();
    let mut lines = printed.split_inclusive('\n').peekable();
    while let Some(line) = lines.next() {
        if line == "\n" && lines.peek() == Some(&"  more measures\n") {
            while lines.peek().is_some_and(|l| l.starts_with("  ")) {
                lines.next();
            }
            continue;
        }
        if let Some(file) = line.trim_end().strip_prefix("wrote OUT/") {
            if !common::BUILT_IN_FILES.contains(&file) {
                continue;
            }
        }
        kept.push(line);
    }
    kept.concat()
}
