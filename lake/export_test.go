package lake

// SetTestHookBeforePublish makes COMMIT call f after writing its metadata
// files and before the catalog swap; the returned func restores the hook.
func SetTestHookBeforePublish(f func() error) (restore func()) {
	old := testHookBeforePublish
	testHookBeforePublish = f
	return func() { testHookBeforePublish = old }
}
