package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/istioctl-installer/istioctl/operator/api/v1alpha1"
)

// cache keeps upstream's results between runs (-cache DIR), keyed by the upstream binary
// (its size and modification time) and the case's arguments and files: a run that changes
// only our code does not run upstream again.
type cache struct {
	dir, binary string
}

func (c *cache) path(cs Case) (string, error) {
	fi, err := os.Stat(c.binary)
	if err != nil {
		return "", err
	}
	key := struct {
		Bin      string
		Args     []string
		Files    map[string]string
		Base     string
		Warnings string `json:",omitempty"`
		// Results cached before objects were keyed by ref's string form (Kind/name when
		// cluster-scoped, not Kind//name) would differ from ours in every such object.
		Keys string
	}{fmt.Sprint(fi.Size(), fi.ModTime().UnixNano()), cs.Args, cs.Files, upstreamHubTag, "", "ref"}
	// Results cached before deprecation warnings were kept lack them; only a case whose
	// input names a setting upstream's manifest generate warns of can have any.
	if mentionsWarned(cs) {
		key.Warnings = "deprecations"
	}
	b, err := json.Marshal(key)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return filepath.Join(c.dir, hex.EncodeToString(sum[:12])+".json"), nil
}

func (c *cache) get(cs Case) (Result, bool) {
	if c == nil {
		return Result{}, false
	}
	p, err := c.path(cs)
	if err != nil {
		return Result{}, false
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return Result{}, false
	}
	var r Result
	if json.Unmarshal(b, &r) != nil {
		return Result{}, false
	}
	return r, true
}

func (c *cache) put(cs Case, r Result) error {
	if c == nil {
		return nil
	}
	p, err := c.path(cs)
	if err != nil {
		return err
	}
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(c.dir, 0o755); err != nil {
		return err
	}
	return os.WriteFile(p, b, 0o644)
}

func mentionsWarned(cs Case) bool {
	text := strings.Join(cs.Args, " ")
	for _, f := range cs.Files {
		text += f
	}
	for _, d := range v1alpha1.Deprecations() {
		if d.Generate && strings.Contains(strings.ToLower(text), strings.ToLower(d.Match)) {
			return true
		}
	}
	return false
}
