package experiments

import (
	"context"

	"golang.org/x/sync/semaphore"
)

// An imageBudget bounds the full-resolution pixels that a sweep's workers
// hold at once. A worker takes an image's pixels (known from its header,
// see data.Sizer) from the budget before decoding it and gives them back
// when the image is done, so images larger than the rest take turns while
// small ones run side by side: with a budget of data.max_pixels, the
// sweep's image memory stays that of one image at the limit (the decoded
// source, one follow-up and the decoder's intermediate image, about 21
// bytes per pixel) whatever the number of workers.
type imageBudget struct {
	sem      *semaphore.Weighted
	capacity int64
	size     func(i int) int64 // image i's pixels
}

// newImageBudget returns a budget of capacity pixels over the images whose
// sizes size gives.
func newImageBudget(capacity int64, size func(i int) (w, h int)) *imageBudget {
	return &imageBudget{sem: semaphore.NewWeighted(capacity), capacity: capacity,
		size: func(i int) int64 { w, h := size(i); return int64(w) * int64(h) }}
}

// acquire waits until image i fits into the budget and takes its pixels
// (at most the whole budget); release gives them back. It fails only when
// ctx is cancelled. A nil budget admits everything at once.
func (b *imageBudget) acquire(ctx context.Context, i int) (release func(), err error) {
	if b == nil {
		return func() {}, nil
	}
	n := min(max(b.size(i), 1), b.capacity)
	if err := b.sem.Acquire(ctx, n); err != nil {
		return nil, err
	}
	return func() { b.sem.Release(n) }, nil
}
