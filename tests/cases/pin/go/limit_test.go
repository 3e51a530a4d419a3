package pinned

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// A limiter that lets at most two uploads run at once, checked then taken without a lock (the bug):
// workers that check while others are between their check and their take all get in. The pool
// has one worker per P: with one or two Ps it never overflows, with more it races (on 2 cores:
// GOMAXPROCS 1 and 2 passed 10 of 10, 4 and 8 failed 10 of 10).
type limiter struct{ active, most atomic.Int32 }

func (l *limiter) upload() {
	if l.active.Load() < 2 {
		busy(20 * time.Millisecond) // preparing the upload, between the check and the take
		n := l.active.Add(1)
		for m := l.most.Load(); n > m && !l.most.CompareAndSwap(m, n); m = l.most.Load() {
		}
		busy(40 * time.Millisecond) // the upload
		l.active.Add(-1)
	}
}

func busy(d time.Duration) {
	for end := time.Now().Add(d); time.Now().Before(end); {
	}
}

func TestAtMostTwoUploads(t *testing.T) {
	var l limiter
	var wg sync.WaitGroup
	for i := 0; i < runtime.GOMAXPROCS(0); i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l.upload()
		}()
	}
	wg.Wait()
	if l.most.Load() > 2 {
		t.Fatal("more than 2 uploads ran at once")
	}
}
