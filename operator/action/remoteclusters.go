package action

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/istioctl-installer/istioctl/operator/check"
	"github.com/istioctl-installer/istioctl/operator/link"
)

// RemoteClusters is remote-clusters: the clusters each istiod reads, as upstream lists them
// (NAME SECRET STATUS ISTIOD REVISION, from istiod's /debug/clusterz), and the link checks
// of every link Secret, which need no istiod.
type RemoteClusters struct {
	*Config
	// Revision limits the istiods asked (-r).
	Revision     string
	ManifestsDir string
	// Wait retries, until Timeout, while any link is broken.
	Wait    bool
	Timeout time.Duration
	// Retry, when set, is told of each failed attempt before the next (--wait).
	Retry func(attempt int, res *RemoteClustersResult)
}

// RemoteClustersResult is the table, the report and the verdict.
type RemoteClustersResult struct {
	Rows   []link.Row
	Report *check.Report
	// Broken says a link check failed (an error).
	Broken bool
}

// retryEvery is how often --wait looks again.
const retryEvery = 2 * time.Second

// Run surveys the links (again, with Wait, until none is broken or Timeout passes).
func (a *RemoteClusters) Run(ctx context.Context) (*RemoteClustersResult, error) {
	client, err := a.connect(ctx)
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(a.Timeout)
	for attempt := 1; ; attempt++ {
		env := &check.Env{Client: client, IstioNamespace: a.istioNamespace(), Revision: a.Revision, Version: a.Version, ManifestsDir: a.ManifestsDir}
		rep := check.Run(ctx, "remote-clusters", check.Links(), env)
		s, err := env.Survey(ctx)
		if err != nil {
			if apierrors.IsForbidden(err) {
				return nil, fmt.Errorf("reading the link Secrets in %s: %w", env.IstioNamespace, err)
			}
			return nil, err
		}
		res := &RemoteClustersResult{Rows: s.Rows(), Report: rep, Broken: rep.FailedAt(check.Error)}
		if !res.Broken || !a.Wait || !time.Now().Add(retryEvery).Before(deadline) {
			return res, nil
		}
		if a.Retry != nil {
			a.Retry(attempt, res)
		}
		select {
		case <-ctx.Done():
			return res, nil
		case <-time.After(retryEvery):
		}
	}
}
