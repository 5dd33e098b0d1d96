ª	
default