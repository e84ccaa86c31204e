// Package experiments runs adaptive metamorphic testing experiments: the
// paper's loop (Algorithm 1), the exhaustive sweep that fills a cached
// verdict table, replay runs against that table, and the YAML
// configurations that describe all of it.
//
// # The loop
//
// The loop (loop.go, run by RunSeeds) draws the source cases of one run in
// a seeded order (each pass visits every case once), asks an Env for the
// case's context features, lets an Agent choose a follow-up (a main arm
// and, for a hierarchical arm, a parameter), asks the Env for the verdict,
// updates the agent and records cumulative counts. The Env is either the
// case study's online Env, which transforms the image and runs the system
// under test on source and follow-up (classification: violation iff their
// top-1 classes differ), or a ReplayEnv, which looks the verdict up in a
// sweep's table. Both answer identically, so a replay run makes exactly
// the choices an online run makes with the same seed.
//
// # Case studies
//
// What differs between image classification (classification.go) and
// object detection (detection.go) sits behind one small interface,
// caseStudy (casestudy.go): the verdict cache's kind and key, a sweep
// worker's judge (the SUT's answers on an image and its follow-ups, one
// cache line), how a cached judgement reads as verdict rows, and the
// online Env. Prepare picks the configured one from the caseStudies
// table; the sweep, the table, the replay and the loop are common.
//
// Randomness is explicit: the image order and the agent's draws come from
// PCG generators seeded with the run's seed on separate streams, and the
// agent's own initialisation from the seed through package bandit.
//
// # Detection
//
// A case_study: detection configuration tests a single-stage COCO detector
// (sut.Detector; by default yolov3-tiny with the reference pipeline's
// letterbox 416, score ≥ 0.005, NMS IoU 0.45, top 100) on a COCO data set.
// A follow-up transforms the image and its ground-truth boxes (the
// relation's ApplyBoxes with the source size: imgaug's axis-aligned hull,
// unclipped, area unchanged, as the original), detects on both, and is a
// violation iff the follow-up's per-image COCO AP@[.5:.95] against the
// transformed ground truth is below the source's AP minus sut.threshold
// (0.05; sut.DetectionOracle). Images without annotations score −1 on both
// sides and always pass. The outcome scores are the two APs, so summaries
// hold the mean mAP on unmodified and modified images (Table 2).
// Its online env computes the source detections once per image; the sweep
// stores per-image APs (not verdicts) and the threshold is applied when the
// table is read. Inside the loop, the replay env and the
// cache an image is its position in the data set; exported detection
// tables (sweep.csv, amt sweep -csv) name it by its COCO image id in the
// image_id column, and amt replay numbers those ids by first appearance,
// which is the data set's order again. Context features come from the
// configured extractor applied to the source image; the feature model
// resizes COCO images to 224×224 without keeping the aspect ratio (the
// original kept it, e.g. 298×224, before the adaptive pooling), and
// features.kind phash works on any size.
//
// # Result files
//
// Their layout, names and content are package record's (its package doc
// describes the result folder; the contract with the plots).
// Experiment.Sweep and Experiment.Run first write run.json (record.Meta),
// so that readers learn what ran without parsing the configuration; Run
// also copies the configuration to config.yaml. RunSeeds writes each
// agent's folder: a seed's progress log (cumulative counts every log
// interval and after the last iteration) when its run completes,
// summary.json after the last seed, and timing.json.
//
// Measured times are the only non-reproducible values. They always go to
// timing.json, and into summary.json (mean_decision_us, mean_iteration_ms)
// only when timing is enabled (the default in online mode, which is what
// RQ3 measures; off in replay mode and for amt replay). With timing off,
// the same configuration and seeds give byte-identical summary.json and
// logs. A cancelled run leaves the logs of completed seeds and no summary;
// every file is written atomically.
//
// Run also draws the first violations of each MR of its first agent's
// first seed (the gallery key) as contact sheets in
// gallery/<agent id>/<mr>.png (gallery.go), outside the agent folders.
//
// # Checks
//
// Experiment.Check is amt check, the metamorphic test gate for continuous
// integration (check.go): one session of the check agent, online, with an
// iteration budget and optionally a time budget (loopOptions.Deadline),
// continuing from the agent's state file when there is one and saving it
// after; package gate then judges the absolute conditions and, against a
// baseline result folder, the regression conditions. It writes the result
// files of a one-seed run, every violation of the session, the gallery and
// check.json (record.Check); package plots turns them into summary.md and
// junit.xml.
//
// # The sweep and its cache
//
// The sweep (sweep.go) runs every follow-up of every image through the
// classifier in one batch per image (source + follow-ups) or the detector
// (one image at a time, the source once), on all cores with one model clone
// per worker, and extracts every image's context features. It caches the
// judgements under <cache>/verdicts-<hash> and the features under
// <cache>/features-<hash> (the file layer is sweepcache.go); the hashes
// cover the content (sha256) of the model, the data file and the feature
// model and every setting the results depend on, so a feature ablation
// reuses the verdicts. Finished images are appended as JSON lines to
// per-process checkpoint files as they complete, so an interrupted sweep
// (Ctrl-C, kill) loses only the images in flight; rerunning computes only
// the missing images, and a complete table is consolidated into
// table.jsonl. A limited sweep (data.limit) reads and extends the cache of
// the whole data set.
//
// # Shards
//
// A sweep, and an experiment's agent runs, split into shards that run as
// separate processes, on one machine or the nodes of a cluster sharing the
// cache folder (shard.go, runshard.go; amt sweep and amt run -shard K/N,
// amt slurm, deploy/kubernetes). Shard K of N owns the images (or seed
// positions) i with i mod N = K; it writes only its own checkpoint files
// and, when done, its shard file, whose header records the table's
// meta.json and the split. MergeSweep and MergeRuns assemble the shard
// files of one split, computing nothing, into what a single process makes,
// byte for byte; a missing shard is named (*MissingShardsError), a shard
// file of other settings or of another split refused. A finished shard is
// never recomputed, an interrupted one resumes from its checkpoints.
//
// Experiment.Sweep also writes the configured scenario's rows as
// results/<experiment>/sweep.csv (the exhaustive baseline), and amt sweep
// exports the table (-csv) and the features as raw float32 [images, dim]
// (-features), the inputs of amt replay.
//
// # Configurations
//
// LoadConfig reads an experiment YAML file strictly against the schema
// (schema.go: one entry per key with its type, default, range, case study
// and meaning; the parser, the reference and the tests all derive from it).
// Unknown keys (with a suggestion), missing keys, values of the wrong type
// or out of range, unknown agents or agent options, unknown relations and
// missing files are *ConfigError values naming the file, the line, the
// column and the key. The reference of every key, agent option, built-in
// scenario and relation is configs/CONFIG.md, generated by
// ConfigReference (amt config -ref). action_set names one of package mr's
// built-in scenarios or defines one, which package mr checks against its
// registry. Prepare then opens the data, loads the models and checks the
// SUT's input size, all before any long work. The configurations shipped in
// configs/ reproduce the paper's research questions and hold the comparison
// and ablation studies; configs/own-model.yaml shows how to test one's own
// classifier on one's own images.
package experiments
