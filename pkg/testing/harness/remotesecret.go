package harness

import (
	"regexp"
	"strings"
)

var (
	secretCredential = regexp.MustCompile(`(token|certificate-authority-data): \S+`)
	secretServerPort = regexp.MustCompile(`(server: https://[^:\s]+):\d+`)
)

// NormRemoteSecret normalises a remote Secret as create-remote-secret prints it, ours or
// upstream's, for a golden comparison: the token, the CA data, the server URL's port and
// the kube-system UID (uid; "" keeps it) vary from bed to bed.
func NormRemoteSecret(out, uid string) string {
	out = secretCredential.ReplaceAllString(out, "$1: REDACTED")
	out = secretServerPort.ReplaceAllString(out, "$1:PORT")
	if uid == "" {
		return out
	}
	return strings.ReplaceAll(out, uid, "KUBE-SYSTEM-UID")
}
