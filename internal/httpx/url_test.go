package httpx

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/providers/kit"
)

const urlKey = "sk-url-test-0123456789"

// TestCheckBaseURL: what a request can go to passes; anything else is
// refused saying why, without the key or a secret of its query.
func TestCheckBaseURL(t *testing.T) {
	for _, ok := range []string{
		"https://api.openai.com/v1", "http://localhost:11434/v1", "http://127.0.0.1:8080", "http://[::1]:8080/v1/",
		"https://proxy.example.com/openai/deployments/d", "https://user:pw@proxy.example.com/v1", "HTTPS://API.EXAMPLE.COM/v1",
	} {
		if err := CheckBaseURL(ok, urlKey); err != nil {
			t.Errorf("%q refused: %v", ok, err)
		}
	}
	for _, tc := range []struct{ url, want string }{
		{"", "scheme"},
		{"localhost:8080", "scheme"},
		{"localhost", "scheme"},
		{"//example.com/v1", "scheme"},
		{"file:///etc/passwd", "scheme"},
		{"ws://example.com/v1", "scheme"},
		{"http:example.com/v1", "no host"},
		{"https://", "no host"},
		{"http://:80", "no host"},
		{"http://example.com:65536", "port"},
		{"http://example.com:0/v1", "port"},
		{"http://example.com/v1?", "query"},
		{"http://example.com/v1?key=" + urlKey, "query"},
		{"http://example.com/v1?api-version=2024", "query"},
		{"http://example.com/v1#", "fragment"},
		{"http://example.com/v1#x", "fragment"},
		{"http://exa mple.com/v1", "does not parse"},
		{"http://example.com/v1\r\n", "does not parse"},
		{"http://example.com:port/v1", "does not parse"},
		{"http://" + urlKey + "@[::1/v1", "does not parse"},
	} {
		err := CheckBaseURL(tc.url, urlKey)
		if !errors.Is(err, ErrBaseURL) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want ErrBaseURL saying %q", tc.url, err, tc.want)
			continue
		}
		if strings.Contains(err.Error(), urlKey[6:]) {
			t.Errorf("%q: the key in %q", tc.url, err)
		}
	}
}

// TestRedactURL: user info and the values of secret-looking parameters go;
// the rest stays to be read.
func TestRedactURL(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"https://h/v1/models/m:streamGenerateContent?alt=sse", "https://h/v1/models/m:streamGenerateContent?alt=sse"},
		{"https://h/v1?key=abc&alt=sse", "https://h/v1?key=[redacted]&alt=sse"},
		{"https://h/v1?API_KEY=abc", "https://h/v1?API_KEY=[redacted]"},
		{"https://h/v1?access_token=abc&sig=x&X-Amz-Signature=y", "https://h/v1?access_token=[redacted]&sig=[redacted]&X-Amz-Signature=[redacted]"},
		{"https://h/v1?api%5Fkey=abc", "https://h/v1?api%5Fkey=[redacted]"},
		{"https://u:p@h/v1", "https://redacted@h/v1"},
		{"https://tok@h/v1", "https://redacted@h/v1"},
		{"https://h/v1#frag", "https://h/v1"},
	} {
		u, err := url.Parse(tc.in)
		if err != nil {
			t.Fatal(err)
		}
		if got := RedactURL(u); got != tc.want {
			t.Errorf("RedactURL(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if got := redactURLString("http://user:secret@[::1/v1?key=abc"); strings.Contains(got, "secret") || strings.Contains(got, "abc") {
		t.Errorf("an unparsable URL keeps a secret: %q", got)
	}
}

// TestRetryable: what may mend is retried, what cannot is not.
func TestRetryable(t *testing.T) {
	_, parseErr := http.NewRequest("POST", "http://[::1/v1", nil)
	dial := func(err error) error {
		return &url.Error{Op: "Post", URL: "http://h/v1", Err: &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", err)}}
	}
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"429", &HTTPError{Status: 429}, true},
		{"503", &HTTPError{Status: 503}, true},
		{"404", &HTTPError{Status: 404}, false},
		{"connection reset", dial(syscall.ECONNRESET), true},
		{"unexpected EOF", &url.Error{Op: "Post", URL: "http://h", Err: io.ErrUnexpectedEOF}, true},
		{"dial timeout", &url.Error{Op: "Post", URL: "http://h", Err: &net.OpError{Op: "dial", Err: errTimeout{}}}, true},
		{"connection refused", dial(syscall.ECONNREFUSED), false},
		{"no such host", &url.Error{Op: "Post", URL: "http://h", Err: &net.OpError{Op: "dial", Err: &net.DNSError{Err: "no such host", Name: "h", IsNotFound: true}}}, false},
		{"DNS server down", &url.Error{Op: "Post", URL: "http://h", Err: &net.OpError{Op: "dial", Err: &net.DNSError{Err: "server misbehaving", Name: "h", IsTemporary: true}}}, true},
		{"URL parse", parseErr, false},
		{"unsupported scheme", &url.Error{Op: "Post", URL: "ftp://h", Err: errors.New(`unsupported protocol scheme "ftp"`)}, false},
		{"untrusted certificate", &url.Error{Op: "Post", URL: "https://h", Err: &tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{}}}, false},
		{"wrong host certificate", &url.Error{Op: "Post", URL: "https://h", Err: x509.HostnameError{Host: "h", Certificate: &x509.Certificate{}}}, false},
		{"plain HTTP server", &url.Error{Op: "Post", URL: "https://h", Err: tls.RecordHeaderError{Msg: "first record does not look like a TLS handshake"}}, false},
		{"a limit", &LimitError{Name: "MaxLineBytes"}, false},
		{"cancelled", context.Canceled, false},
	} {
		if got := Retryable(tc.err); got != tc.want {
			t.Errorf("%s: Retryable = %v, want %v", tc.name, got, tc.want)
		}
	}
}

type errTimeout struct{}

func (errTimeout) Error() string { return "i/o timeout" }
func (errTimeout) Timeout() bool { return true }

// TestRetryCountsAttempts: the error of a request tried more than once
// says how many times; one tried once says nothing of it.
func TestRetryCountsAttempts(t *testing.T) {
	o := kit.HTTPDefaults(providers.HTTPOptions{RetryBaseDelay: time.Millisecond, MaxRetries: 3})
	calls := 0
	_, err := Retry(context.Background(), o, func() (int, error) {
		calls++
		return 0, &HTTPError{Status: 502, Message: "bad gateway", Method: "POST", URL: "https://h/v1/chat/completions"}
	})
	var ae *AttemptsError
	if calls != 4 || !errors.As(err, &ae) || ae.Attempts != 4 {
		t.Fatalf("%d calls, error %v", calls, err)
	}
	if got, want := Describe(err, ""), "HTTP 502: bad gateway (POST https://h/v1/chat/completions; 4 attempts)"; got != want {
		t.Fatalf("Describe = %q, want %q", got, want)
	}
	calls = 0
	_, err = Retry(context.Background(), o, func() (int, error) {
		calls++
		return 0, &HTTPError{Status: 401, Message: "no"}
	})
	if calls != 1 || errors.As(err, &ae) || Describe(err, "") != "HTTP 401: no" {
		t.Fatalf("%d calls, %q", calls, Describe(err, ""))
	}
}

// TestDescribeKeepsWhere: however long the server's message, the request's
// method and URL survive the cut, and no key is in either.
func TestDescribeKeepsWhere(t *testing.T) {
	long := strings.Repeat("blah ", 2000) + urlKey
	err := &AttemptsError{Attempts: 2, Err: &HTTPError{Status: 500, Message: long, Method: "POST", URL: "https://h/v1?x=" + urlKey}}
	got := Describe(err, urlKey)
	if len(got) > MaxQuotedBytes || !strings.HasSuffix(got, " (POST https://h/v1?x=[redacted]; 2 attempts)") || !strings.Contains(got, "[... cut from") {
		t.Fatalf("%d bytes: %q", len(got), got[max(0, len(got)-200):])
	}
	if Quote(got, urlKey) != got {
		t.Fatal("Out.Emit's Quote would cut it again")
	}
	if strings.Contains(got, urlKey[6:]) {
		t.Fatal("the key survived")
	}
}

// TestRefusedRequestSeen: a request a server refuses through a Client is
// noted in a watched context with its method and URL, for an SDK's error
// that does not name them.
func TestRefusedRequestSeen(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "nope", http.StatusForbidden)
	}))
	defer srv.Close()
	ctx := Watch(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPut, srv.URL+"/v1/x?token=abc&alt=sse", nil)
	resp, err := Client(kit.HTTPDefaults(providers.HTTPOptions{})).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if m, u := Refused(ctx); m != http.MethodPut || u != srv.URL+"/v1/x?token=[redacted]&alt=sse" {
		t.Fatalf("Refused = %q %q", m, u)
	}
	if m, u := Refused(context.Background()); m != "" || u != "" {
		t.Fatalf("unwatched: %q %q", m, u)
	}
}
