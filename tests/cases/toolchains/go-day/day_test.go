package day

import (
	"testing"
	"time"
)

// The calendar day of 2026-01-01T02:00Z in the process's time zone.
func TestDay(t *testing.T) {
	got := time.Date(2026, 1, 1, 2, 0, 0, 0, time.UTC).Local().Format("2006-01-02")
	if got != "2026-01-01" {
		t.Fatalf("error: expected 2026-01-01, got %s", got)
	}
}
