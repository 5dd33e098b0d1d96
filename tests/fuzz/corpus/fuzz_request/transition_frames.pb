â
default