package redact

import (
	"encoding/base64"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// credentialNames are the header and query parameter names, lower-cased
// with '-', '_' and '.' left out, that carry a credential though nothing
// in them says so to the heuristic of CredentialName.
var credentialNames = []string{"code", "sig", "pwd", "cookie", "setcookie"}

// credentialParts are the pieces a name carrying a credential holds
// (lower-cased, '-', '_' and '.' left out): "X-Api-Key", "access_token",
// "client_secret", "X-Amz-Signature", "Authorization", "password".
var credentialParts = []string{"key", "token", "secret", "passw", "signature", "credential", "auth", "session"}

// CredentialName reports whether a header or query parameter named name
// carries a credential: key, api_key, apikey, api-key, X-Goog-Api-Key,
// subscription-key, access_token, token, client_secret, password, code,
// sig, signature, Authorization, Cookie, any X-Amz-* parameter, and any
// other whose name holds "key", "token", "secret", "passw", "signature",
// "credential", "auth" or "session", in any case. It errs on the side of
// a credential: a name taken for one by mistake only costs its value.
func CredentialName(name string) bool {
	n := strings.Map(func(r rune) rune {
		switch {
		case r == '-' || r == '_' || r == '.':
			return -1
		case r >= 'A' && r <= 'Z':
			return r + 'a' - 'A'
		}
		return r
	}, name)
	if strings.HasPrefix(n, "xamz") || slices.Contains(credentialNames, n) {
		return true
	}
	return slices.ContainsFunc(credentialParts, func(p string) bool { return strings.Contains(n, p) })
}

// Credentials returns the secrets a header or parameter named name (one
// CredentialName accepts) carries in value: the value itself, the
// credentials after an auth scheme ("Bearer sk-..."), the user:password
// pair and the password of Basic credentials, and each cookie's value.
func Credentials(name, value string) []string {
	value = strings.TrimSpace(value)
	if value == "" {
		return nil
	}
	if strings.EqualFold(name, "cookie") {
		var out []string
		for c := range strings.SplitSeq(value, ";") {
			if _, v, ok := strings.Cut(c, "="); ok && strings.TrimSpace(v) != "" {
				out = append(out, strings.TrimSpace(v))
			}
		}
		return append(out, value)
	}
	out := []string{value}
	scheme, cred, ok := strings.Cut(value, " ")
	if !ok {
		return out
	}
	cred = strings.TrimSpace(cred)
	out = append(out, cred)
	if strings.EqualFold(scheme, "basic") {
		if dec, err := base64.StdEncoding.DecodeString(cred); err == nil {
			out = append(out, string(dec))
			if _, pass, ok := strings.Cut(string(dec), ":"); ok {
				out = append(out, pass)
			}
		}
	}
	return out
}

// Parts returns v and the parts of a credential header's value an
// application may echo on their own, whatever the header's name: the
// token after an auth scheme ("Bearer T"), Basic's user:password and
// password, and the value of each name=value parameter (a cookie's,
// Token token="T"), unquoted and percent-decoded, as an application
// parses them back.
func Parts(v string) []string {
	out := []string{v}
	rest := v
	if scheme, tok, ok := strings.Cut(v, " "); ok && !strings.ContainsAny(scheme, "=;,\"") {
		tok = strings.TrimSpace(tok)
		out = append(out, tok)
		rest = tok
		if strings.EqualFold(scheme, "basic") {
			dec, err := base64.StdEncoding.DecodeString(tok)
			if err != nil {
				dec, err = base64.RawStdEncoding.DecodeString(tok)
			}
			if err == nil {
				out = append(out, string(dec))
				if _, pass, ok := strings.Cut(string(dec), ":"); ok {
					out = append(out, pass)
				}
			}
		}
	}
	for _, p := range strings.FieldsFunc(rest, func(r rune) bool { return r == ';' || r == ',' }) {
		_, val, ok := strings.Cut(p, "=")
		if !ok {
			continue
		}
		val = strings.TrimSpace(val)
		if u, err := strconv.Unquote(val); err == nil && strings.HasPrefix(val, `"`) {
			val = u
		} else {
			val = strings.Trim(val, `"`)
		}
		out = append(out, val)
		if u, err := url.QueryUnescape(val); err == nil && u != val {
			out = append(out, u)
		}
		if u, err := url.PathUnescape(val); err == nil && u != val {
			out = append(out, u)
		}
	}
	return out
}
