package registry

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
)

// Registry is a running registry.
type Registry struct {
	cmd *exec.Cmd
	// Host is its host:port on loopback.
	Host string
	// User and Password are the credentials it requires ("" for none).
	User, Password string
}

// Start runs a registry for the rest of the test; user is "user:password" to require
// credentials, or "".
func Start(t testing.TB, user string) *Registry {
	t.Helper()
	args := []string{"-dir", t.TempDir()}
	if user != "" {
		args = append(args, "-user", user)
	}
	cmd := exec.Command(cluster.Bin(t, "registry"), args...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting the registry: %v", err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() && stderr.Len() > 0 {
			t.Logf("registry %v said:\n%s", args, stderr.String())
		}
	})
	lines := make(chan string, 1)
	go func() {
		s := bufio.NewScanner(stdout)
		for s.Scan() {
			if addr, ok := strings.CutPrefix(s.Text(), "listening on "); ok {
				lines <- addr
			}
		}
	}()
	r := &Registry{cmd: cmd}
	r.User, r.Password, _ = strings.Cut(user, ":")
	select {
	case r.Host = <-lines:
	case <-time.After(30 * time.Second):
		t.Fatal("the registry did not start in 30s")
	}
	return r
}

// Keychain holds the registry's credentials.
func (r *Registry) Keychain() authn.Keychain {
	if r.User == "" {
		return authn.NewMultiKeychain()
	}
	return staticKeychain{r.Host, &authn.Basic{Username: r.User, Password: r.Password}}
}

type staticKeychain struct {
	host string
	auth authn.Authenticator
}

func (k staticKeychain) Resolve(res authn.Resource) (authn.Authenticator, error) {
	if res.RegistryStr() == k.host {
		return k.auth, nil
	}
	return authn.Anonymous, nil
}

// DockerConfig writes a docker config holding creds (host -> "user:password") into a new
// directory and points DOCKER_CONFIG at it for the rest of the test.
func DockerConfig(t *testing.T, creds map[string]string) {
	t.Helper()
	var entries []string
	for host, up := range creds {
		entries = append(entries, fmt.Sprintf("%q: {%q: %q}", host, "auth", encode(up)))
	}
	dir := t.TempDir()
	body := `{"auths": {` + strings.Join(entries, ", ") + `}}`
	if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("DOCKER_CONFIG", dir)
}

// Push writes a random image to ref (with platforms > 1, an index of that many images, one
// per platform) and returns its digest.
func (r *Registry) Push(t testing.TB, ref string, platforms int) v1.Hash {
	t.Helper()
	dst, err := name.ParseReference(ref)
	if err != nil {
		t.Fatal(err)
	}
	opts := []remote.Option{remote.WithAuthFromKeychain(r.Keychain())}
	if platforms <= 1 {
		img, err := random.Image(256, 1)
		if err != nil {
			t.Fatal(err)
		}
		if err := remote.Write(dst, img, opts...); err != nil {
			t.Fatalf("pushing %s: %v", ref, err)
		}
		d, _ := img.Digest()
		return d
	}
	var adds []mutate.IndexAddendum
	archs := []string{"amd64", "arm64", "ppc64le", "s390x"}
	for i := 0; i < platforms; i++ {
		img, err := random.Image(256, 1)
		if err != nil {
			t.Fatal(err)
		}
		adds = append(adds, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: archs[i%len(archs)]}}})
	}
	idx := mutate.AppendManifests(empty.Index, adds...)
	if err := remote.WriteIndex(dst, idx, opts...); err != nil {
		t.Fatalf("pushing %s: %v", ref, err)
	}
	d, _ := idx.Digest()
	return d
}

// Digest is the digest ref points at, read with kc.
func Digest(t testing.TB, ref string, kc authn.Keychain) string {
	t.Helper()
	r, err := name.ParseReference(ref)
	if err != nil {
		t.Fatal(err)
	}
	d, err := remote.Head(r, remote.WithAuthFromKeychain(kc))
	if err != nil {
		t.Fatalf("resolving %s: %v", ref, err)
	}
	return d.Digest.String()
}

// Stop stops the registry now (a registry that is down).
func (r *Registry) Stop(t testing.TB) {
	t.Helper()
	if err := r.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_, _ = r.cmd.Process.Wait()
}
