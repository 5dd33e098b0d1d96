º
walker