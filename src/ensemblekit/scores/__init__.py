"""Pure score functions: arrays of labels, values or data in, numbers out."""
