module kts.local/driverkit

go 1.23
