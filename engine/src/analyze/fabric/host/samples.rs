//! Outputs written as the tools print them, for the readers' tests: the NVIDIA RoCE profile
//! (trust dscp, DSCP 26 → priority 3, PFC on 3, CNPs at DSCP 48 priority 6, NCCL_IB_TC=106,
//! NCCL_IB_GID_INDEX=3, MTU 9000) and variants; and the model one reader makes of a text.

use crate::analyze::fabric::model::{ConfigError, DeviceConfig};

/// What `reader` makes of `text`, the contents of `file`, on its own.
pub(super) fn read_with(
    reader: fn(&str, &str, &mut DeviceConfig) -> Result<(), ConfigError>,
    file: &str,
    text: &str,
) -> Result<DeviceConfig, ConfigError> {
    let mut config = DeviceConfig::default();
    reader(file, text, &mut config)?;
    Ok(config)
}

/// `mlnx_qos -i ens1f0np0`, trust dscp, PFC on priority 3 (`python/mlnx_qos`'s layout).
pub(super) const MLNX_QOS_ROCE: &str = "\
DCBX mode: OS controlled
Priority trust state: dscp
dscp2prio mapping:
\tprio:0 dscp:07,06,05,04,03,02,01,00,
\tprio:1 dscp:15,14,13,12,11,10,09,08,
\tprio:2 dscp:23,22,21,20,19,18,17,16,
\tprio:3 dscp:31,30,29,28,27,26,25,24,
\tprio:4 dscp:39,38,37,36,35,34,33,32,
\tprio:5 dscp:47,46,45,44,43,42,41,40,
\tprio:6 dscp:55,54,53,52,51,50,49,48,
\tprio:7 dscp:63,62,61,60,59,58,57,56,
default priority:
Receive buffer size (bytes): 130944,130944,0,0,0,0,0,0,total_size=1027584
Cable len: 7
PFC configuration:
\tpriority    0   1   2   3   4   5   6   7
\tenabled     0   0   0   1   0   0   0   0   
\tbuffer      0   0   0   1   0   0   0   0   
tc: 0 ratelimit: unlimited, tsa: ets, bw: 50%
\t priority:  0
\t priority:  1
\t priority:  2
tc: 3 ratelimit: unlimited, tsa: ets, bw: 50%
\t priority:  3
tc: 6 ratelimit: unlimited, tsa: strict
\t priority:  6
";

/// `mlnx_qos` with trust pcp (no dscp2prio block is printed) and PFC off.
pub(super) const MLNX_QOS_PCP_PFC_OFF: &str = "\
DCBX mode: OS controlled
Priority trust state: pcp
default priority:
Receive buffer size (bytes): 262016,0,0,0,0,0,0,0,total_size=1027584
Cable len: 7
PFC configuration:
\tpriority    0   1   2   3   4   5   6   7
\tenabled     0   0   0   0   0   0   0   0   
\tbuffer      0   0   0   0   0   0   0   0   
tc: 0 ratelimit: unlimited, tsa: ets, bw: 100%
\t priority:  0
";

/// `show_gids`, the RoCE v1 and v2 GIDs of one port (`sbin/show_gids`' tab layout).
pub(super) const SHOW_GIDS_ROCE: &str = "\
DEV\tPORT\tINDEX\tGID\t\t\t\t\tIPv4  \t\tVER\tDEV
---\t----\t-----\t---\t\t\t\t\t------------  \t---\t---
mlx5_0\t1\t0\tfe80:0000:0000:0000:0e42:a1ff:fe5b:2c10\t\t\tv1\tens1f0np0
mlx5_0\t1\t1\tfe80:0000:0000:0000:0e42:a1ff:fe5b:2c10\t\t\tv2\tens1f0np0
mlx5_0\t1\t2\t0000:0000:0000:0000:0000:ffff:0a00:0001\t10.0.0.1  \tv1\tens1f0np0
mlx5_0\t1\t3\t0000:0000:0000:0000:0000:ffff:0a00:0001\t10.0.0.1  \tv2\tens1f0np0
n_gids_found=4
";

/// `show_gids` of a port with RoCE v1 GIDs only.
pub(super) const SHOW_GIDS_V1_ONLY: &str = "\
DEV\tPORT\tINDEX\tGID\t\t\t\t\tIPv4  \t\tVER\tDEV
---\t----\t-----\t---\t\t\t\t\t------------  \t---\t---
mlx5_1\t1\t0\tfe80:0000:0000:0000:0e42:a1ff:fe5b:2c11\t\t\tv1\tens1f1np1
mlx5_1\t1\t1\t0000:0000:0000:0000:0000:ffff:0a00:0102\t10.0.1.2  \tv1\tens1f1np1
n_gids_found=2
";

/// `/etc/profile.d/nccl.sh`.
pub(super) const NCCL_PROFILE: &str = "\
#!/bin/sh
# NCCL over RoCE: TC 106 is DSCP 26 with ECT(0); GID 3 is RoCE v2 over IPv4
export NCCL_IB_TC=106
export NCCL_IB_GID_INDEX=\"3\"
export NCCL_IB_HCA='mlx5_0:1,mlx5_1:1'
export NCCL_SOCKET_IFNAME=ens1f0np0  # the bootstrap network
export PATH=/usr/local/cuda/bin:$PATH
";

/// `mlxconfig -d /dev/mst/mt4125_pciconf0 query` (lines cut to the ROCE_CC ones).
pub(super) const MLXCONFIG_ROCE: &str = "
Device #1:
----------

Device type:        ConnectX6DX
Name:               MCX623106AN-CDA_Ax
Description:        ConnectX-6 Dx EN adapter card; 100GbE; Dual-port QSFP56; PCIe 4.0/3.0 x16;
Device:             /dev/mst/mt4125_pciconf0

Configurations:                                          Next Boot
        LINK_TYPE_P1                                ETH(2)
        ROCE_CC_PRIO_MASK_P1                        255
        ROCE_CC_ALGORITHM_P1                        ECN(0)
        CNP_802P_PRIO_P1                            6
        CNP_DSCP_P1                                 48
        LINK_TYPE_P2                                ETH(2)
        ROCE_CC_PRIO_MASK_P2                        255
        ROCE_CC_ALGORITHM_P2                        ECN(0)
        CNP_802P_PRIO_P2                            7
        CNP_DSCP_P2                                 46
";

/// The ECN sysfs as `grep . /sys/class/net/IF/ecn/*/* /sys/class/net/IF/ecn/*/enable/*`
/// prints it (with `2>&1`): the notification and reaction points on priority 3 only.
pub(super) const SYSFS_ECN_ROCE: &str = "\
/sys/class/net/ens1f0np0/ecn/roce_np/cnp_802p_prio:6
/sys/class/net/ens1f0np0/ecn/roce_np/cnp_dscp:48
grep: /sys/class/net/ens1f0np0/ecn/roce_np/enable: Is a directory
/sys/class/net/ens1f0np0/ecn/roce_np/min_time_between_cnps:4
/sys/class/net/ens1f0np0/ecn/roce_rp/clamp_tgt_rate:0
grep: /sys/class/net/ens1f0np0/ecn/roce_rp/enable: Is a directory
/sys/class/net/ens1f0np0/ecn/roce_rp/rpg_ai_rate:5
/sys/class/net/ens1f0np0/ecn/roce_np/enable/0:0
/sys/class/net/ens1f0np0/ecn/roce_np/enable/1:0
/sys/class/net/ens1f0np0/ecn/roce_np/enable/2:0
/sys/class/net/ens1f0np0/ecn/roce_np/enable/3:1
/sys/class/net/ens1f0np0/ecn/roce_np/enable/4:0
/sys/class/net/ens1f0np0/ecn/roce_np/enable/5:0
/sys/class/net/ens1f0np0/ecn/roce_np/enable/6:0
/sys/class/net/ens1f0np0/ecn/roce_np/enable/7:0
/sys/class/net/ens1f0np0/ecn/roce_rp/enable/3:1
";

/// `ip -d link show ens1f0np0`.
pub(super) const IP_LINK_DETAILS: &str = "\
2: ens1f0np0: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 9000 qdisc mq state UP mode DEFAULT group default qlen 1000
    link/ether 0c:42:a1:5b:2c:10 brd ff:ff:ff:ff:ff:ff promiscuity 0  allmulti 0 minmtu 68 maxmtu 9978 addrgenmode none numtxqueues 504 numrxqueues 63 gso_max_size 65536 gso_max_segs 65535 parentbus pci parentdev 0000:3b:00.0
";

/// All samples, each with its format.
pub(super) fn all() -> [(super::HostFormat, &'static str); 10] {
    use super::HostFormat::*;
    [
        (MlnxQos, MLNX_QOS_ROCE),
        (MlnxQos, MLNX_QOS_PCP_PFC_OFF),
        (ShowGids, SHOW_GIDS_ROCE),
        (ShowGids, SHOW_GIDS_V1_ONLY),
        (NcclEnv, NCCL_PROFILE),
        (NcclEnv, "SHELL=/bin/bash\nNCCL_IB_TC=106\nHOME=/root\n"),
        (Mlxconfig, MLXCONFIG_ROCE),
        (SysfsEcn, SYSFS_ECN_ROCE),
        (IpLink, IP_LINK_DETAILS),
        (IpLink, "3: ens1f1np1: <NO-CARRIER,BROADCAST,MULTICAST,UP> mtu 1500 qdisc mq state DOWN\n"),
    ]
}
