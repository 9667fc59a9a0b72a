package cmd_test

import (
	"encoding/json"
	"net"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/istioctl-installer/istioctl/pkg/testing/harness"
	"github.com/istioctl-installer/istioctl/pkg/testing/registry"
)

type listedImage struct {
	Component, Container, Image, Source, Field string
}

// listImages runs x images list -o json with args.
func listImages(t *testing.T, args ...string) []listedImage {
	t.Helper()
	out, stderr, err := harness.Run(t, append([]string{"x", "images", "list", "-o", "json"}, args...)...)
	if err != nil {
		t.Fatalf("images list %v: %v\n%s", args, err, stderr)
	}
	var doc struct{ Images []listedImage }
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("images list -o json: %v\n%s", err, out)
	}
	return doc.Images
}

type mirrorLine struct {
	Event, Source, Target, Digest, Error string
	Platforms, Copied, Present           int
}

func mirrorEvents(t *testing.T, out string) map[string][]mirrorLine {
	t.Helper()
	by := map[string][]mirrorLine{}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var m mirrorLine
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("mirror -o json line %q: %v", l, err)
		}
		by[m.Event] = append(by[m.Event], m)
	}
	return by
}

// TestImagesMirrorE2E pushes synthetic images into one loopback registry under every name
// x images list prints for demo and ambient, mirrors them to a second one (with credentials)
// by digest, mirrors again (nothing copied), and meets a registry that is down and one that
// refuses the credentials.
func TestImagesMirrorE2E(t *testing.T) {
	src := registry.Start(t, "")
	dst := registry.Start(t, "mirror:s3cret")
	registry.DockerConfig(t, map[string]string{dst.Host: "mirror:s3cret"})
	srcHub := src.Host + "/istio"
	want := map[string]string{} // source image -> digest pushed
	var sets [][]string
	for _, profile := range []string{"demo", "ambient"} {
		set := []string{"--set", "profile=" + profile, "--set", "hub=" + srcHub}
		sets = append(sets, set)
		list := listImages(t, set...)
		if len(list) < 3 {
			t.Fatalf("%s: %d images listed: %+v", profile, len(list), list)
		}
		for _, im := range list {
			if !strings.HasPrefix(im.Image, srcHub+"/") {
				t.Errorf("%s: %s (%s, %s) escapes hub %s", profile, im.Image, im.Component, im.Field, srcHub)
			}
			if _, done := want[im.Image]; done {
				continue
			}
			platforms := 1
			if strings.Contains(im.Image, "/proxyv2:") {
				platforms = 2 // the proxy as a multi-platform index
			}
			want[im.Image] = src.Push(t, im.Image, platforms).String()
		}
	}
	to := dst.Host + "/mesh"
	copied := map[string]bool{}
	for _, set := range sets {
		out, stderr, err := harness.Run(t, append([]string{"x", "images", "mirror", "-o", "json", "--to", to}, set...)...)
		if err != nil {
			t.Fatalf("mirror %v: %v\n%s\n%s", set, err, out, stderr)
		}
		ev := mirrorEvents(t, out)
		for _, c := range ev["copied"] {
			if c.Digest != want[c.Source] {
				t.Errorf("%s copied at %s, pushed at %s", c.Source, c.Digest, want[c.Source])
			}
			if strings.Contains(c.Source, "/proxyv2:") && c.Platforms != 2 {
				t.Errorf("%s: %d platforms copied, want 2", c.Source, c.Platforms)
			}
			copied[c.Source] = true
		}
		if len(ev["done"]) != 1 || len(ev["failed"]) != 0 {
			t.Errorf("mirror %v: %+v", set, ev)
		}
	}
	// Every image is at the target under the hub's name, by the digest pushed, and each
	// platform of the index is there too.
	for img, digest := range want {
		if !copied[img] {
			t.Errorf("%s never copied", img)
		}
		target := to + img[strings.LastIndexByte(img, '/'):]
		ref, _ := name.ParseReference(target)
		desc, err := remote.Get(ref, remote.WithAuthFromKeychain(dst.Keychain()))
		if err != nil {
			t.Fatalf("%s at the target: %v", target, err)
		}
		if desc.Digest.String() != digest {
			t.Errorf("%s at %s, want %s", target, desc.Digest, digest)
		}
		if desc.MediaType.IsIndex() {
			idx, _ := desc.ImageIndex()
			m, _ := idx.IndexManifest()
			for _, child := range m.Manifests {
				if _, err := remote.Image(ref.Context().Digest(child.Digest.String()), remote.WithAuthFromKeychain(dst.Keychain())); err != nil {
					t.Errorf("%s, platform %v: %v", target, child.Platform, err)
				}
			}
		}
	}
	// A second mirror copies nothing.
	out, stderr, err := harness.Run(t, append([]string{"x", "images", "mirror", "-o", "json", "--to", to}, sets[0]...)...)
	if err != nil {
		t.Fatalf("second mirror: %v\n%s", err, stderr)
	}
	if ev := mirrorEvents(t, out); len(ev["copied"]) != 0 || len(ev["skipped"]) == 0 {
		t.Errorf("second mirror copied %d, found %d present", len(ev["copied"]), len(ev["skipped"]))
	}

	// Refused credentials and a registry that is down: named, non-zero, nothing called done.
	registry.DockerConfig(t, map[string]string{dst.Host: "mirror:wrong"})
	fresh := dst.Host + "/other"
	out, _, err = harness.Run(t, append([]string{"x", "images", "mirror", "--to", fresh}, sets[0]...)...)
	if err == nil || !strings.Contains(err.Error(), "registry "+dst.Host+" refused the credentials") {
		t.Errorf("wrong credentials: %v", err)
	}
	if strings.Contains(out, "mirrored:") {
		t.Errorf("a refused mirror reported done:\n%s", out)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := ln.Addr().String()
	ln.Close()
	out, _, err = harness.Run(t, append([]string{"x", "images", "mirror", "--to", down + "/mesh"}, sets[0]...)...)
	if err == nil || !strings.Contains(err.Error(), "registry "+down) || !strings.Contains(err.Error(), "not mirrored") {
		t.Errorf("registry down: %v", err)
	}
	if strings.Contains(out, "mirrored:") {
		t.Errorf("a failed mirror reported done:\n%s", out)
	}
}
