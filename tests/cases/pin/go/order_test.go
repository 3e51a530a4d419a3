package pinned

import "testing"

// An order dependency: TestEmpty fails when TestFill ran before it (go test -shuffle on).
var cache = map[string]int{}

func TestFill(t *testing.T) { cache["key"] = 1 }

func TestEmpty(t *testing.T) {
	if len(cache) != 0 {
		t.Fatalf("the cache holds %d entries: TestFill ran first", len(cache))
	}
}
