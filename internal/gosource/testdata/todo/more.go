package todo

// Clear empties the list.
//
// It cannot be undone.
func (l *TodoList) Clear() {}

// Count counts the tasks, in /* a comment */ a second file.
func Count(l *TodoList) int { return len(l.tasks) }
