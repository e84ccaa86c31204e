// Package record defines amt's result files, their names and their
// content, and reads and writes them: the run metadata (run.json: what ran,
// with which inputs and scenario), the per-agent summary (summary.json),
// the per-run progress logs (JSON lines, cumulative counts like the
// original Tetraband logs), the measured times (timing.json) and the
// exhaustive verdict table (CSV). The experiment runner writes them and the
// plots package reads them, so this package is the whole contract between
// the two, and its layout below is the one description of a result folder
// (other packages' comments point here).
//
// Every writer is atomic (WriteFileAtomic, through internal/atomicfile): it
// writes a temporary file in the destination directory and renames it into
// place, so an interrupted run never leaves a half-written file behind.
//
// # The result folder
//
// An experiment's result folder, results/<experiment>/, holds:
//
//	run.json                   what ran (Meta), written by the runner
//	config.yaml                the configuration it ran with (a snapshot)
//	sweep.csv                  the exhaustive verdict table of the scenario's variants
//	<agent>/summary.json       final state of every seed's run (Summary)
//	<agent>/seed-<n>.jsonl     progress log of seed n (LogLine per line)
//	<agent>/timing.json        measured times (Timing)
//	<agent>/decisions-seed-<n>.jsonl  with -log-decisions: every decision of seed n (Decision per line)
//	tune.json                  how amt tune chose the agents' options (Tuning, tune.go)
//	regression.json            a regression experiment's SUT change (Regression, regression.go)
//	sweep-after.csv            its verdict table of the SUT after the change
//	corruption.json            a corruption report's reference SUT (Corruption, corruption.go)
//	sweep-reference.csv        its verdict table of the reference SUT
//	report.md, figures/, tables/  written by the plots package
//	check.json, summary.md, junit.xml, <agent>/violations.jsonl, gallery/
//	                           amt check's decision and the violations (check.go)
//	.amt-run.json              which complete run the agents' results are, by which amt (RunStamp)
//	.amt-written.json          the drawn files amt wrote and may delete (WrittenFile, written.go)
//
// Every file belongs to one run, named by its Identity: run.json,
// summary.json and timing.json carry it, run.json records the sha256 of
// config.yaml (as the identity's config_sha256) and of sweep.csv, and
// summary.json the sha256 of each progress log. An agent folder is written
// whole (AgentFolder).
package record
