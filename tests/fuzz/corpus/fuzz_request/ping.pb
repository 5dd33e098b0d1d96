Z
hi