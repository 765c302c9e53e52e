package httpx

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
)

// ErrBaseURL is a base URL no request could go to; a provider refuses it
// before any request, with a message saying what is wrong with it.
var ErrBaseURL = errors.New("malformed base URL")

// CheckBaseURL reports what makes raw unusable as an API's base URL, to
// which a provider appends its paths: it must be an absolute http or https
// URL with a host (and a port in range, if any), and carry no query or
// fragment, which the appended path would land in. The path is not
// guessed at: whether it needs /v1 depends on the server (Azure and
// proxies differ), so a wrong one shows in the 404's URL instead. The
// error quotes raw without key and without secrets in its query.
func CheckBaseURL(raw, key string) error {
	bad := func(why string) error {
		return fmt.Errorf("%w %q: %s", ErrBaseURL, Quote(redactURLString(raw), key), why)
	}
	u, err := url.Parse(raw)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return bad(fmt.Sprintf("it does not parse (%s)", Quote(err.Error(), key)))
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return bad("it needs an http:// or https:// scheme, as in https://api.example.com/v1")
	case u.Opaque != "" || u.Hostname() == "":
		return bad("it has no host, as in https://api.example.com/v1")
	case u.RawQuery != "" || u.ForceQuery:
		return bad("it has a query, which the API's paths appended to it would follow")
	case u.Fragment != "" || strings.Contains(raw, "#"):
		return bad("it has a fragment (#...), which is never sent")
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return bad("its port is not between 1 and 65535")
		}
	}
	return nil
}

// RedactURL returns u as an error message may show it: its user info,
// and the values of query parameters whose names suggest a
// secret (key, token, secret, signature, auth, password, credential), as
// [redacted]; no fragment.
func RedactURL(u *url.URL) string {
	c := *u
	c.Fragment, c.RawFragment = "", ""
	if c.User != nil {
		c.User = url.User("redacted") // a user name may be a token too
	}
	if c.RawQuery != "" {
		parts := strings.Split(c.RawQuery, "&")
		for i, p := range parts {
			name, _, _ := strings.Cut(p, "=")
			if secretParam(name) {
				parts[i] = name + "=[redacted]"
			}
		}
		c.RawQuery = strings.Join(parts, "&")
	}
	return c.String()
}

// redactURLString is RedactURL of a URL in text form; one that does not
// parse loses its query and user info by hand.
func redactURLString(raw string) string {
	if u, err := url.Parse(raw); err == nil {
		return RedactURL(u)
	}
	if i := strings.IndexAny(raw, "?#"); i >= 0 {
		raw = raw[:i] + "?[redacted]"
	}
	if at := strings.LastIndex(raw, "@"); at >= 0 {
		if s := strings.Index(raw, "://"); s >= 0 && s < at {
			raw = raw[:s+3] + "[redacted]" + raw[at:]
		}
	}
	return raw
}

// secretParam reports whether a query parameter's name suggests a secret.
func secretParam(name string) bool {
	if n, err := url.QueryUnescape(name); err == nil {
		name = n
	}
	name = strings.ToLower(name)
	for _, s := range []string{"key", "token", "secret", "sig", "auth", "pass", "credential", "session"} {
		if strings.Contains(name, s) {
			return true
		}
	}
	return false
}
