// Package plots redraws an experiment's figures, tables and report from its
// result files — it reads results/<experiment>/ (see Load; package
// record's doc describes the folder) and never needs to know how they were
// produced.
//
// Render writes, into the experiment's folder:
//
//	figures/<name>.png, figures/<name>.svg   gonum/plot figures
//	tables/<name>.md, .csv, .tex             every table in three formats
//	report.md                                figures, tables, the paper's values, caveats, config
//
// The figures and tables are the paper's (Spieker & Gotlieb, "Adaptive
// Metamorphic Testing with Contextual Bandits"): the violation rate per MR
// of the agent against the exhaustive baseline (RQ1), per rotation and
// shear degree (RQ1, RQ2), the per-class effects table (Table 1), runtime
// and accuracy (Table 2, RQ3), the original tool's progress plot, and a
// comparison of agents with two oracles computed from the verdict table.
// Numbers are aggregated exactly as the original evaluation did (package
// plots/analysis). The paper's own values (PaperTable1, PaperTable2,
// PaperClaims) are transcribed from its LaTeX source and shown beside ours.
//
// The output depends only on the input files: rendering the same results
// twice gives byte-identical files.
//
// Layout: report.go holds Render, the builder the sections write through
// and the ordered list of sections; each section is one file,
// section_<name>.go (setup, per_mr, per_degree, table1, runtime, progress,
// comparison, claims, caveats, config), holding its prose, figures and
// tables. Numbers come from package plots/analysis, which reads only the
// types of experiments/record. figures.go draws (gonum/plot) the charts
// of barchart.go, linechart.go and cichart.go, table.go encodes tables, paper_values.go holds the paper's numbers, experiment.go
// loads a result folder. A new figure or section is its file plus one entry
// in the list.
package plots
