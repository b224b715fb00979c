package redact

import (
	"encoding/base64"
	"slices"
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
