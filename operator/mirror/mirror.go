package mirror

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	"golang.org/x/sync/errgroup"
)

// DefaultParallel is how many images are copied at once when Options.Parallel is 0.
const DefaultParallel = 4

// Options say what to copy where.
type Options struct {
	// To is the target: a registry with an optional path ("registry.example.com:5000/mesh").
	// Each image keeps its last path component and its tag or digest there, so that
	// --set hub=<To> pulls every copied image.
	To string
	// Images are the source references.
	Images []string
	// Parallel bounds the copies at once (0: DefaultParallel).
	Parallel int
	// DryRun resolves sources and checks the target, but copies nothing.
	DryRun bool
	// Keychain finds credentials (nil: authn.DefaultKeychain, the docker config).
	Keychain authn.Keychain
	// Transport is the HTTP transport (nil: remote's default).
	Transport http.RoundTripper
	// Event receives progress, one call at a time (nil: dropped).
	Event func(Event)
}

// Event is a typed progress event: Started, Copied, Skipped, Planned or Failed.
type Event interface{ isEvent() }

// Started says how many images will be looked at.
type Started struct{ Total int }

// Copied is an image written to the target, Platforms manifests in all (1 for one image).
type Copied struct {
	Source, Target, Digest string
	Platforms              int
}

// Skipped is an image the target already holds at the same digest.
type Skipped struct{ Source, Target, Digest string }

// Planned is an image a dry run would copy.
type Planned struct{ Source, Target, Digest string }

// Failed is an image that could not be copied.
type Failed struct {
	Source, Target string
	Err            error
}

func (Started) isEvent() {}
func (Copied) isEvent()  {}
func (Skipped) isEvent() {}
func (Planned) isEvent() {}
func (Failed) isEvent()  {}

// Result counts what a run did.
type Result struct{ Copied, Skipped, Planned int }

// Target is where src lands under to: to/<last path component of src>, with src's tag and
// digest.
func Target(src, to string) (string, error) {
	ref, err := name.ParseReference(src)
	if err != nil {
		return "", fmt.Errorf("image %q: %w", src, err)
	}
	repo := ref.Context().RepositoryStr()
	base := repo[strings.LastIndexByte(repo, '/')+1:]
	out := strings.TrimSuffix(to, "/") + "/" + base
	tag, digest := tagAndDigest(src)
	if tag != "" {
		out += ":" + tag
	}
	if digest != "" {
		out += "@" + digest
	}
	return out, nil
}

// tagAndDigest splits name:tag@digest's tag and digest off ("" when absent).
func tagAndDigest(ref string) (tag, digest string) {
	if i := strings.IndexByte(ref, '@'); i >= 0 {
		ref, digest = ref[:i], ref[i+1:]
	}
	if i := strings.LastIndexByte(ref, ':'); i > strings.LastIndexByte(ref, '/') {
		tag = ref[i+1:]
	}
	return tag, digest
}

// Run copies every image of o.Images to o.To. It returns an error naming each image it
// could not copy (and the registry at fault); what it did copy is in the result either way.
func Run(ctx context.Context, o Options) (Result, error) {
	if strings.TrimSpace(o.To) == "" {
		return Result{}, errors.New("no target registry: give --to REGISTRY[/PATH]")
	}
	if _, err := name.NewRepository(strings.TrimSuffix(o.To, "/") + "/x"); err != nil {
		return Result{}, fmt.Errorf("--to %q is not a registry[/path]: %w", o.To, err)
	}
	srcs := append([]string(nil), o.Images...)
	sort.Strings(srcs)
	srcs = dedupe(srcs)
	// Two sources landing on one target would overwrite each other.
	byTarget := map[string]string{}
	for _, s := range srcs {
		t, err := Target(s, o.To)
		if err != nil {
			return Result{}, err
		}
		if prev, ok := byTarget[t]; ok {
			return Result{}, fmt.Errorf("%s and %s would both be copied to %s: they share a name and tag; mirror them separately", prev, s, t)
		}
		byTarget[t] = s
	}
	if o.Keychain == nil {
		o.Keychain = authn.DefaultKeychain
	}
	parallel := o.Parallel
	if parallel <= 0 {
		parallel = DefaultParallel
	}
	var mu sync.Mutex
	var res Result
	var failures []error
	emit := func(e Event) {
		mu.Lock()
		defer mu.Unlock()
		switch e := e.(type) {
		case Copied:
			res.Copied++
		case Skipped:
			res.Skipped++
		case Planned:
			res.Planned++
		case Failed:
			failures = append(failures, fmt.Errorf("%s -> %s: %w", e.Source, e.Target, e.Err))
		}
		if o.Event != nil {
			o.Event(e)
		}
	}
	emit(Started{Total: len(srcs)})
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(parallel)
	for _, s := range srcs {
		t, _ := Target(s, o.To)
		g.Go(func() error {
			emit(copyOne(gctx, o, s, t))
			return nil
		})
	}
	_ = g.Wait()
	if err := ctx.Err(); err != nil {
		return res, err
	}
	if len(failures) > 0 {
		return res, fmt.Errorf("%d of %d image(s) not mirrored:\n  %w", len(failures), len(srcs), joinIndented(failures))
	}
	return res, nil
}

func dedupe(sorted []string) []string {
	out := sorted[:0]
	for i, s := range sorted {
		if i == 0 || s != sorted[i-1] {
			out = append(out, s)
		}
	}
	return out
}

// copyOne copies one image (or index, with every platform) and says what happened.
func copyOne(ctx context.Context, o Options, src, dst string) Event {
	fail := func(err error) Event { return Failed{Source: src, Target: dst, Err: err} }
	srcRef, err := name.ParseReference(src)
	if err != nil {
		return fail(err)
	}
	dstRef, err := name.ParseReference(dst)
	if err != nil {
		return fail(err)
	}
	opts := []remote.Option{remote.WithContext(ctx), remote.WithAuthFromKeychain(o.Keychain)}
	if o.Transport != nil {
		opts = append(opts, remote.WithTransport(o.Transport))
	}
	desc, err := remote.Get(srcRef, opts...)
	if err != nil {
		return fail(registryError(srcRef, "reading", err))
	}
	digest := desc.Digest.String()
	if have, err := remote.Head(dstRef, opts...); err == nil && have.Digest == desc.Digest {
		return Skipped{Source: src, Target: dst, Digest: digest}
	} else if err != nil && !isNotFound(err) {
		return fail(registryError(dstRef, "checking", err))
	}
	if o.DryRun {
		return Planned{Source: src, Target: dst, Digest: digest}
	}
	platforms := 1
	if desc.MediaType.IsIndex() {
		idx, err := desc.ImageIndex()
		if err != nil {
			return fail(registryError(srcRef, "reading", err))
		}
		m, err := idx.IndexManifest()
		if err != nil {
			return fail(registryError(srcRef, "reading", err))
		}
		platforms = len(m.Manifests)
		if err := remote.WriteIndex(dstRef, idx, opts...); err != nil {
			return fail(registryError(dstRef, "writing", err))
		}
	} else {
		img, err := desc.Image()
		if err != nil {
			return fail(registryError(srcRef, "reading", err))
		}
		if err := remote.Write(dstRef, img, opts...); err != nil {
			return fail(registryError(dstRef, "writing", err))
		}
	}
	// By digest: the target must now serve the very manifest the source does.
	got, err := remote.Head(dstRef, opts...)
	if err != nil {
		return fail(registryError(dstRef, "checking the copy at", err))
	}
	if got.Digest != desc.Digest {
		return fail(fmt.Errorf("registry %s holds %s at digest %s after the copy, not %s", dstRef.Context().RegistryStr(), dst, got.Digest, desc.Digest))
	}
	return Copied{Source: src, Target: dst, Digest: digest, Platforms: platforms}
}

// Resolve is the digest ref points at in its registry.
func Resolve(ctx context.Context, ref string, kc authn.Keychain) (v1.Hash, error) {
	r, err := name.ParseReference(ref)
	if err != nil {
		return v1.Hash{}, fmt.Errorf("image %q: %w", ref, err)
	}
	if kc == nil {
		kc = authn.DefaultKeychain
	}
	d, err := remote.Head(r, remote.WithContext(ctx), remote.WithAuthFromKeychain(kc))
	if err != nil {
		return v1.Hash{}, registryError(r, "resolving", err)
	}
	return d.Digest, nil
}

func isNotFound(err error) bool {
	var te *transport.Error
	return errors.As(err, &te) && te.StatusCode == http.StatusNotFound
}

// registryError names the registry a call failed at, and says what to do about refused
// credentials.
func registryError(ref name.Reference, doing string, err error) error {
	reg := ref.Context().RegistryStr()
	var te *transport.Error
	if errors.As(err, &te) && (te.StatusCode == http.StatusUnauthorized || te.StatusCode == http.StatusForbidden) {
		return fmt.Errorf("registry %s refused the credentials %s %s (HTTP %d): log in to it (docker login %s) or fix the docker config: %w",
			reg, doing, ref, te.StatusCode, reg, err)
	}
	return fmt.Errorf("registry %s: %s %s: %w", reg, doing, ref, err)
}

type indented []error

func (e indented) Error() string {
	var s []string
	for _, x := range e {
		s = append(s, x.Error())
	}
	return strings.Join(s, "\n  ")
}

func (e indented) Unwrap() []error { return e }

func joinIndented(errs []error) error { return indented(errs) }
