б*
defaultd0:dEмлл=HP
Zwalk`hp