package docgen

import (
	"path/filepath"
	"testing"
)

// TestArchitectureLifecycle: the lifecycle picture of docs/architecture.md is the one the code's
// phases make (Lifecycle over transfer.Phase).
func TestArchitectureLifecycle(t *testing.T) {
	Check(t, filepath.Join("..", "..", "docs", "architecture.md"), "lifecycle", LifecycleMermaid())
}
