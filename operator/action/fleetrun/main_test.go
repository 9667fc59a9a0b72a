package fleetrun

import (
	"testing"

	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
)

// TestMain stops the clusters and the bed this binary started (the link and fleet tests).
func TestMain(m *testing.M) { cluster.Main(m) }
