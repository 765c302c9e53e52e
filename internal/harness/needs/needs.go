// Package needs is how a test says that something outside the module is
// missing: a browser, Node.js and the npm packages of the real MCP
// servers, the recorded streams in ../shared, a second CPU. It names what
// is missing and how to get it, and then:
//
//   - outside CI, skips the test, and says so where it can be seen: the
//     skip message (go test -v), and one line on the terminal, since
//     go test ./... hides the output of a package that passes (on
//     standard output when there is no terminal, which go test shows when
//     run in the package's folder);
//   - under CI (the CI variable set, to anything but "0" or "false"), fails
//     it instead: CI installs everything, so a skip there would hide a
//     promise no longer checked.
//
// Run the suite with CI=1 to see everything a machine lacks:
//
//	CI=1 go test ./...
package needs

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// CI reports whether the tests run under CI: the CI variable is set and is
// neither "0" nor "false" (in any case). GitHub Actions, GitLab and most
// others set CI=true.
func CI() bool {
	v := strings.TrimSpace(os.Getenv("CI"))
	return v != "" && v != "0" && !strings.EqualFold(v, "false")
}

// Missing stops the test because what is missing; how says how to get it.
// Outside CI the test is skipped, and the skip is printed where go test
// shows it; under CI the test fails.
func Missing(t testing.TB, what, how string) {
	t.Helper()
	stop(t, what, how, CI(), os.Stdout, true)
}

// stop is Missing with its surroundings given: whether CI is set, where
// standard output goes, and whether to try the terminal first.
func stop(t testing.TB, what, how string, ci bool, stdout io.Writer, terminal bool) {
	t.Helper()
	msg := what + "; to run it: " + how
	if ci {
		t.Fatalf("%s (CI is set, so a missing requirement fails the test)", msg)
		return
	}
	line := fmt.Sprintf("SKIP %s%s: %s (CI=1 makes this a failure)\n", where(), t.Name(), msg)
	// go test ./... shows nothing of a package that passes, but a terminal
	// still gets the line. Without one (CI, an editor) it goes to standard
	// output, which go test shows in the package's folder or with -v.
	written := false
	if terminal {
		if tty, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0); err == nil {
			_, err = tty.WriteString(line)
			written = err == nil
			_ = tty.Close()
		}
	}
	if !written {
		_, _ = io.WriteString(stdout, line)
	}
	t.Skip(msg)
}

// where is the package's folder relative to the module's root, with a
// trailing space, for a line printed among other packages' lines.
func where() string {
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	root := moduleRoot(dir)
	rel, err := filepath.Rel(root, dir)
	if err != nil || root == "" {
		return ""
	}
	return filepath.ToSlash(rel) + " "
}

// moduleRoot is the nearest folder at or above dir holding a go.mod, or "".
func moduleRoot(dir string) string {
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// Chromium returns the path of a Chromium (or Chrome) browser for headless
// tests, or stops the test (see Missing).
func Chromium(t testing.TB) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	Missing(t, "no Chromium on this machine", "apt-get install chromium (Debian, Ubuntu), or put chromium or google-chrome on PATH")
	return ""
}

// NPMPackage returns node and the absolute path of script, a file of an npm
// package installed by npm ci in the folder npmDir (relative to the test's
// package folder, as the tests see it), or stops the test (see Missing).
func NPMPackage(t testing.TB, npmDir, script string) (node, path string) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		Missing(t, "no node on this machine", "install Node.js 20 or later with npm (apt-get install nodejs npm), then npm ci in "+inModule(npmDir))
		return "", ""
	}
	path, _ = filepath.Abs(filepath.Join(npmDir, script))
	if _, err := os.Stat(path); err != nil {
		Missing(t, "the npm packages are not installed ("+filepath.ToSlash(script)+")", "cd "+inModule(npmDir)+" && npm ci")
		return "", ""
	}
	return node, path
}

// inModule is dir, relative to the test's package folder, as a path from
// the module's root, for a command the reader runs there.
func inModule(dir string) string {
	wd, err := os.Getwd()
	if err != nil {
		return dir
	}
	abs, _ := filepath.Abs(filepath.Join(wd, dir))
	if rel, err := filepath.Rel(moduleRoot(wd), abs); err == nil && !strings.HasPrefix(rel, "..") {
		return filepath.ToSlash(rel)
	}
	return abs
}

// Shared returns the folder name of the project's shared folder, ../shared
// beside the module's root (where the recorded streams live), or stops the
// test (see Missing).
func Shared(t testing.TB, name string) string {
	t.Helper()
	wd, _ := os.Getwd()
	root := moduleRoot(wd)
	dir := filepath.Join(filepath.Dir(root), "shared", name)
	if root == "" {
		dir = filepath.Join("..", "shared", name)
	}
	if _, err := os.Stat(dir); err != nil {
		Missing(t, "no "+filepath.ToSlash(filepath.Join("..", "shared", name))+" beside the module (looked at "+dir+")",
			"put the project's shared folder beside the checkout, as ../shared")
		return ""
	}
	return dir
}

// CPUs stops the test (see Missing) on a machine with fewer than n CPUs.
func CPUs(t testing.TB, n int) {
	t.Helper()
	if runtime.NumCPU() < n {
		Missing(t, fmt.Sprintf("%d CPUs on this machine, the test needs %d", runtime.NumCPU(), n), fmt.Sprintf("run it on a machine with %d or more", n))
	}
}
