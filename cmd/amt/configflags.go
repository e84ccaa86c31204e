package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/amt-dev/amt/experiments"
	"github.com/amt-dev/amt/internal/plural"
)

// assetsHelp is the help text of the -assets flag.
const assetsHelp = "assets folder for relative paths (default: $AMT_ASSETS or the shared assets)"

// configFlags are the flags of a command that reads an experiment
// configuration: -config and -assets and, where the command declares them,
// -max-pixels, -workers and -out, which override the configuration's
// values, and -shard and -merge.
type configFlags struct {
	fs             *flag.FlagSet
	config, assets string
	maxPixels      int
	workers        int // -1: the configuration's
	out            string
	shardSpec      string
	shard          experiments.Shard // -shard parsed
	merge          bool
}

// newConfigFlags declares -config and -assets on fs, with their help texts
// (most commands' -assets help is assetsHelp).
func newConfigFlags(fs *flag.FlagSet, configHelp, assetsHelp string) *configFlags {
	c := &configFlags{fs: fs, workers: -1}
	fs.StringVar(&c.config, "config", "", configHelp)
	fs.StringVar(&c.assets, "assets", "", assetsHelp)
	return c
}

// declareMaxPixels declares -max-pixels, overriding data.max_pixels.
func (c *configFlags) declareMaxPixels() {
	c.fs.IntVar(&c.maxPixels, "max-pixels", 0, "the image budget in pixels, overriding the config's data.max_pixels (0: the config's)")
}

// declareWorkers declares -workers, overriding the configuration's
// workers.
func (c *configFlags) declareWorkers(help string) {
	c.fs.IntVar(&c.workers, "workers", -1, help)
}

// declareShard declares -shard K/N and -merge: the command does one shard
// of its work, for one task of a cluster array job, or assembles the
// shards' results.
func (c *configFlags) declareShard(shardHelp, mergeHelp string) {
	c.fs.StringVar(&c.shardSpec, "shard", "", shardHelp)
	c.fs.BoolVar(&c.merge, "merge", false, mergeHelp)
}

// applyWorkers sets *dst to -workers, if given, after checking it against
// the range of the configuration's workers.
func (c *configFlags) applyWorkers(dst *int) error {
	switch {
	case c.workers == -1: // not given
		return nil
	case c.workers < 0 || c.workers > 1024:
		return usagef("%s: -workers %d: want 0 (one per core) to 1024", c.name(), c.workers)
	}
	*dst = c.workers
	return nil
}

// sharded reports whether -shard was given.
func (c *configFlags) sharded() bool { return c.shardSpec != "" }

// declareOut declares -out, overriding the results folder.
func (c *configFlags) declareOut() {
	c.fs.StringVar(&c.out, "out", "", "results folder (default: output)")
}

// name returns the command's name, for its messages.
func (c *configFlags) name() string {
	return strings.TrimPrefix(c.fs.Name(), "amt ")
}

// parse parses the command line of a command that wants -config and no
// arguments, printing the usage when it lacks them.
func (c *configFlags) parse(args []string) error {
	if err := c.fs.Parse(args); err != nil {
		return err
	}
	if c.config == "" || c.fs.NArg() > 0 {
		return showUsagef(c.fs, "%s: want -config FILE and no arguments", c.name())
	}
	return c.parseShard()
}

// parseShard parses -shard, if given.
func (c *configFlags) parseShard() error {
	if !c.sharded() {
		return nil
	}
	var err error
	if c.shard, err = experiments.ParseShard(c.shardSpec); err != nil {
		return usagef("%s: -shard: %w", c.name(), err)
	}
	return nil
}

// load reads the configuration and applies -max-pixels, -workers and -out.
func (c *configFlags) load() (*experiments.Config, error) {
	cfg, err := experiments.LoadConfig(c.config, c.assets)
	if err != nil {
		return nil, err
	}
	if err := setMaxPixels(cfg, c.maxPixels); err != nil {
		return nil, fmt.Errorf("%s: %w", c.name(), err)
	}
	if err := c.applyWorkers(&cfg.Workers); err != nil {
		return nil, err
	}
	if c.out != "" {
		cfg.Output = c.out
	}
	return cfg, nil
}

// prepare loads the configuration and prepares the experiment, its device
// events going to logf (the configuration's Logf; nil: nowhere).
func (c *configFlags) prepare(ctx context.Context, logf func(format string, args ...any)) (*experiments.Experiment, error) {
	cfg, err := c.load()
	if err != nil {
		return nil, err
	}
	cfg.Logf = logf
	return experiments.Prepare(ctx, cfg)
}

// shardDone writes what the shard of experiment name did to its items (of
// unit, e.g. "image", done as e.g. "computed") since start, and how to
// merge the shards.
func (c *configFlags) shardDone(w io.Writer, name string, st experiments.ShardStats, unit, done string, start time.Time) {
	fmt.Fprintf(w, "%s: %s shard %s: %s (%d cached, %d %s) in %s; when every shard is done: amt %s -config %s -merge\n",
		name, c.name(), c.shard, plural.Count(st.Items, unit), st.Cached, st.Computed, done, time.Since(start).Round(time.Millisecond), c.name(), c.config)
}

// setMaxPixels applies a -max-pixels flag (0: not given) to cfg.
func setMaxPixels(cfg *experiments.Config, n int) error {
	switch {
	case n == 0:
		return nil
	case n < 0:
		return fmt.Errorf("-max-pixels %d: want at least 1", n)
	case cfg.Data.Format != "coco" && cfg.Data.Format != "folder":
		return fmt.Errorf("-max-pixels: %s images have one size, read from the file; the budget applies to coco and folder data sets", cfg.Data.Format)
	}
	cfg.Data.MaxPixels = n
	return nil
}
