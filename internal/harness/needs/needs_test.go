package needs

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
)

func TestCI(t *testing.T) {
	for _, tc := range []struct {
		value string
		want  bool
	}{
		{"", false}, {"0", false}, {"false", false}, {"FALSE", false}, {" false ", false},
		{"1", true}, {"true", true}, {"True", true}, {"yes", true},
	} {
		t.Setenv("CI", tc.value)
		if got := CI(); got != tc.want {
			t.Errorf("CI=%q: %v, want %v", tc.value, got, tc.want)
		}
	}
}

// recorder stands in for a test: it records how it was stopped and stops
// its goroutine the way testing does.
type recorder struct {
	testing.TB
	failed, skipped string
}

func (r *recorder) Helper()      {}
func (r *recorder) Name() string { return "TestSomething" }
func (r *recorder) Fatalf(format string, args ...any) {
	r.failed = fmt.Sprintf(format, args...)
	runtime.Goexit()
}
func (r *recorder) Skip(args ...any) {
	r.skipped = fmt.Sprint(args...)
	runtime.Goexit()
}

// TestStop: outside CI a missing requirement skips the test with what is
// missing and how to get it, and prints a line naming the package and the
// test; under CI it fails the test with the same words and prints nothing.
func TestStop(t *testing.T) {
	for _, ci := range []bool{false, true} {
		r := &recorder{TB: t}
		var out strings.Builder
		done := make(chan struct{})
		go func() {
			defer close(done)
			stop(r, "no frobnicator on this machine", "apt-get install frobnicator", ci, &out, false)
			t.Errorf("CI %v: stop returned", ci)
		}()
		<-done
		const words = "no frobnicator on this machine; to run it: apt-get install frobnicator"
		switch {
		case ci && (r.skipped != "" || !strings.HasPrefix(r.failed, words) || !strings.Contains(r.failed, "CI is set") || out.Len() != 0):
			t.Errorf("under CI: failed %q, skipped %q, printed %q", r.failed, r.skipped, out.String())
		case !ci && (r.failed != "" || r.skipped != words):
			t.Errorf("outside CI: failed %q, skipped %q", r.failed, r.skipped)
		case !ci && out.String() != "SKIP internal/harness/needs TestSomething: "+words+" (CI=1 makes this a failure)\n":
			t.Errorf("outside CI, printed %q", out.String())
		}
	}
}

// TestFound: what is there is returned and the test goes on.
func TestFound(t *testing.T) {
	if dir := Shared(t, ""); !strings.HasSuffix(dir, "shared") {
		t.Errorf("Shared: %q", dir)
	}
	CPUs(t, 1)
}
