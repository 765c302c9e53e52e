package main

import (
	"context"
	"strings"
	"testing"
)

// TestExtractOffline: the scripted model's first answer (a wrong type, a
// missing field) is refused with the listing, the second is the typed
// answer.
func TestExtractOffline(t *testing.T) {
	var out strings.Builder
	inv, err := run(context.Background(), &out, true)
	if err != nil {
		t.Fatal(err)
	}
	if inv != (Invoice{Vendor: "ACME Tools Ltd", Date: "2026-11-02", Total: 120, Paid: true}) {
		t.Fatalf("answer %+v", inv)
	}
	for _, want := range []string{"Validation failed", "total", "date"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the output lacks %q:\n%s", want, out.String())
		}
	}
}
