package experiments

import (
	"context"
	"fmt"
	"math"
	"sort"
	"sync"

	"github.com/amt-dev/amt/nn/kernels"
	"github.com/amt-dev/amt/rgb"
)

// missing returns the images of shard sh (every image for the zero
// Shard) whose judgement or features are missing, ascending.
func (s *sweepRun) missing(sh Shard) []int {
	var todo []int
	for i := 0; i < s.t.Images; i++ {
		if sh.owns(i) && (!s.haveV[i] || !s.haveF[i]) {
			todo = append(todo, i)
		}
	}
	return todo
}

// missingShards describes the missing images todo of a merge.
func (s *sweepRun) missingShards(todo []int) error {
	c, split := s.verdicts, s.ldV.split
	if split == 0 && s.features != nil {
		split = s.ldF.split
	}
	if s.ldV.split == 0 && s.features != nil && s.ldF.split != 0 {
		c = s.features
	}
	return missingShardsError(c, split, todo, s.t.Images)
}

// missingShardsError is the error of a merge of table c (split: the split
// of its shard files, 0 for none) that lacks the items todo of n.
func missingShardsError(c *cacheTable, split int, todo []int, n int) error {
	e := &MissingShardsError{What: c.what, Unit: c.unit, Dir: c.dir, Count: split, Lacking: len(todo), Total: n}
	if split > 0 {
		seen := map[int]bool{}
		var shards []Shard
		for _, i := range todo {
			if k := i % split; !seen[k] {
				seen[k] = true
				e.Missing = append(e.Missing, k)
			}
		}
		sort.Ints(e.Missing)
		for _, k := range e.Missing {
			shards = append(shards, Shard{k, split})
		}
		e.Elsewhere = c.othersOf(shards)
	}
	return e
}

// sutPass fills the table's grey-box blocks: from the "sut" cache table,
// the missing ones computed one image at a time (one SUT inference each,
// checkpointed, with progress) — cheap next to judging the follow-ups.
func (s *sweepRun) sutPass(ctx context.Context, total int) error {
	cfg, n := s.cfg, s.t.Images
	dim, err := cfg.study.sutDim()
	if err != nil {
		return fmt.Errorf("sweep: %w", err)
	}
	key := struct {
		Version  int
		Verdicts any
		Block    string
	}{1, cfg.verdictKey, cfg.study.sutBlock()}
	if s.sut, err = openCache(cfg.cacheDir, "sut", key, cacheMeta{Kind: "sut", Images: total, Dim: dim}); err != nil {
		return err
	}
	s.t.sut, s.t.sutDim = make([]float32, n*dim), dim
	have := make([]bool, n)
	if _, err := s.sut.load(ctx, readAll, Shard{}, func(line []byte) (int, error) {
		var l featureLine
		if err := strictJSON(line, &l); err != nil {
			return 0, err
		}
		if l.Image < 0 || l.Image >= total || len(l.Features) != dim {
			return 0, fmt.Errorf("image %d with %d values does not fit %d images × %d", l.Image, len(l.Features), total, dim)
		}
		if l.Image < n && !have[l.Image] {
			have[l.Image] = true
			copy(s.t.sut[l.Image*dim:], l.Features)
		}
		return l.Image, nil
	}); err != nil {
		return err
	}
	var todo []int
	for i, ok := range have {
		if !ok {
			todo = append(todo, i)
		}
	}
	if len(todo) == 0 {
		return nil
	}
	answer, err := cfg.study.newSutAnswer()
	if err != nil {
		return fmt.Errorf("sweep: %w", err)
	}
	part := s.sut.checkpoint(Shard{}, s.stamp, 0)
	defer part.close()
	done := n - len(todo)
	for _, i := range todo {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("sweep interrupted after the grey-box blocks of %d of %d images (finished ones are cached; rerun to resume): %w", done, n, context.Cause(ctx))
		}
		g, err := answer(i)
		if err != nil {
			return fmt.Errorf("sweep: %w", err)
		}
		if len(g) != dim {
			return fmt.Errorf("sweep: image %d: the grey-box block has %d values, want %d", i, len(g), dim)
		}
		copy(s.t.sut[i*dim:], g)
		if err := part.append(featureLine{Image: i, Features: g}); err != nil {
			return err
		}
		done++
		if cfg.progress != nil {
			cfg.progress(done, n)
		}
	}
	return nil
}

// sweepRun is a sweep in progress, shared by its workers: the table they
// fill (each writes only the images it takes from the queue), what the
// cache already held, and the cache tables they checkpoint to.
type sweepRun struct {
	cfg          *sweepConfig
	shard        Shard // the shard computed (the zero Shard: all images)
	total        int   // images of the cached tables (the whole data set)
	t            *Table
	haveV, haveF []bool // judgement, features of image i known
	verdicts     *cacheTable
	features     *cacheTable // nil without features
	sut          *cacheTable // nil without the grey-box block
	ldV, ldF     loaded      // what loading the tables found
	ext0         extractor   // the extractor made to learn the dimension, worker 0's
	stamp        int64       // names this process's checkpoint files
}

// verdictLine and featureLine are image i's lines of the cache tables.
func (s *sweepRun) verdictLine(i int) any { return s.t.judged[i] }

func (s *sweepRun) featureLine(i int) any {
	return featureLine{Image: i, Features: s.t.Features[i*s.t.Dim : (i+1)*s.t.Dim]}
}

// run judges the images todo on the configured number of workers; done of
// total images are finished already (for the progress).
func (s *sweepRun) run(ctx context.Context, todo []int, done, total int) error {
	workers := s.cfg.workers
	if workers <= 0 {
		workers = kernels.Threads()
	}
	workers = min(workers, len(todo))
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	jobs := make(chan int)
	finished := make(chan int)
	errc := make(chan error, workers)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			if err := s.worker(ctx, w, jobs, finished); err != nil {
				errc <- err
				cancel()
			}
		}(w)
	}
	go func() {
		defer close(jobs)
		for _, i := range todo {
			select {
			case jobs <- i:
			case <-ctx.Done():
				return
			}
		}
	}()
	go func() { wg.Wait(); close(finished) }()
	for range finished {
		done++
		if s.cfg.progress != nil {
			s.cfg.progress(done, total)
		}
	}
	close(errc)
	if err := <-errc; err != nil {
		return err
	}
	if done < total {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("sweep interrupted after %d of %d images (finished images are cached; rerun to resume): %w", done, total, context.Cause(ctx))
		}
		return fmt.Errorf("sweep: only %d of %d images finished", done, total)
	}
	return nil
}

// worker processes images from jobs: it judges an image whose judgement
// the cache lacks and extracts its features if they are missing,
// checkpointing each to its own file, and reports the image on finished.
// It makes its judge and extractor on first use.
func (s *sweepRun) worker(ctx context.Context, w int, jobs <-chan int, finished chan<- int) error {
	var jd judge
	var ext extractor
	if w == 0 {
		ext = s.ext0
	}
	vpart := s.verdicts.checkpoint(s.shard, s.stamp, w)
	defer vpart.close()
	var fpart *checkpoint
	if s.features != nil {
		fpart = s.features.checkpoint(s.shard, s.stamp, w)
		defer fpart.close()
	}
	for i := range jobs {
		if ctx.Err() != nil {
			return nil
		}
		// The image's pixels come out of the budget until it is done (an
		// error ends the sweep, and its cancel unblocks the other workers).
		release, err := s.cfg.budget.acquire(ctx, i)
		if err != nil {
			return nil
		}
		var img rgb.Image
		if !s.haveV[i] {
			if jd == nil {
				if jd, err = s.cfg.study.newJudge(); err != nil {
					return fmt.Errorf("sweep: %w", err)
				}
			}
			var j judgement
			j, img, err = jd.judge(ctx, i, s.t.Variants, s.cfg.relations)
			if err != nil {
				if ctx.Err() != nil {
					return nil // interrupted: the image in flight is dropped
				}
				return err
			}
			if err := vpart.append(j); err != nil {
				return err
			}
			s.t.judged[i] = j
		}
		if !s.haveF[i] {
			if img.Pix == nil {
				if img, _, err = s.cfg.source.Image(i); err != nil {
					return fmt.Errorf("sweep: image %d: %w", i, err)
				}
			}
			if ext == nil {
				if ext, err = s.cfg.newExtractor(); err != nil {
					return fmt.Errorf("sweep: %w", err)
				}
			}
			f, err := featuresOf(ext, img, i, s.t.Dim)
			if err != nil {
				return fmt.Errorf("sweep: %w", err)
			}
			for k, x := range f {
				if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
					return fmt.Errorf("sweep: features of image %d: value %d is %v", i, k, x)
				}
			}
			if err := fpart.append(featureLine{Image: i, Features: f}); err != nil {
				return err
			}
			copy(s.t.Features[i*s.t.Dim:], f)
		}
		img = rgb.Image{}
		release()
		finished <- i
	}
	return nil
}
